package parquet

// The Parquet footer is a Thrift FileMetaData in the compact protocol. A LogicalType is a union;
// a writer newer than arrow-go may set a member arrow-go does not know, which Thrift skips,
// leaving an empty union that arrow-go calls "invalid logical type" and refuses the whole file.
// The Parquet format says readers ignore logical types they do not know and read the column by
// its physical type. withoutUnknownLogicalTypes returns the footer with such logical types
// removed, for arrow-go to read, or nil when it holds none (or is not a footer it can walk).

// Field ids of the Thrift definitions (parquet.thrift).
const (
	fmdSchema       = 2  // FileMetaData.schema: list<SchemaElement>
	elemLogicalType = 10 // SchemaElement.logicalType: LogicalType
)

// knownLogical holds the LogicalType members arrow-go reads (STRING=1 ... GEOGRAPHY=18; 9 is
// unused).
var knownLogical = map[int16]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true,
	10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true, 18: true}

func withoutUnknownLogicalTypes(footer []byte) []byte {
	w := &walker{b: footer}
	if err := w.structure(0, func(id int16, typ byte) (bool, error) {
		if id != fmdSchema || typ != ctList {
			return false, nil
		}
		n, et, err := w.listHeader()
		if err != nil || et != ctStruct {
			return true, errFooter
		}
		for range n {
			if err := w.structure(1, w.schemaElement); err != nil {
				return true, err
			}
		}
		return true, nil
	}); err != nil {
		return nil
	}
	return w.apply(footer)
}

// schemaElement handles a field of a SchemaElement: an unknown logical type is removed.
func (w *walker) schemaElement(id int16, typ byte) (bool, error) {
	if id != elemLogicalType || typ != ctStruct {
		return false, nil
	}
	known := false
	err := w.structure(2, func(id int16, typ byte) (bool, error) {
		known = known || knownLogical[id]
		return false, nil
	})
	if err == nil && !known {
		err = errRemove
	}
	return true, err
}
