package stats

import "strings"

// MediaType returns the media type of an encoded value recognised from its first bytes (its
// magic number): image/png, image/jpeg, image/gif, image/webp, image/bmp, image/tiff,
// audio/wav, audio/flac, audio/mpeg (MP3, with an ID3 tag or a frame header), audio/ogg,
// application/gzip, application/zstd, application/zip, application/pdf,
// application/x-npy; "application/octet-stream" when none matches.
func MediaType(b string) string {
	for _, m := range magics {
		if len(b) >= m.off+len(m.magic) && b[m.off:m.off+len(m.magic)] == m.magic &&
			(m.also == "" || len(b) >= 8+len(m.also) && strings.HasPrefix(b[8:], m.also)) {
			return m.typ
		}
	}
	// An MP3 frame without an ID3 tag: 11 set sync bits, MPEG version not 01 (reserved), layer
	// III (01), bitrate index not 1111.
	if len(b) >= 3 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 && b[1]&0x18 != 0x08 && b[1]&0x06 == 0x02 && b[2]&0xF0 != 0xF0 {
		return "audio/mpeg"
	}
	return octetStream
}

const octetStream = "application/octet-stream"

// magics are the signatures MediaType knows: magic at offset off, and for RIFF containers
// also at offset 8.
var magics = []struct {
	off         int
	magic, also string
	typ         string
}{
	{0, "\x89PNG\r\n\x1a\n", "", "image/png"},
	{0, "\xFF\xD8\xFF", "", "image/jpeg"},
	{0, "GIF87a", "", "image/gif"},
	{0, "GIF89a", "", "image/gif"},
	{0, "RIFF", "WEBP", "image/webp"},
	{0, "RIFF", "WAVE", "audio/wav"},
	{0, "BM", "", "image/bmp"},
	{0, "II*\x00", "", "image/tiff"},
	{0, "MM\x00*", "", "image/tiff"},
	{0, "fLaC", "", "audio/flac"},
	{0, "ID3", "", "audio/mpeg"},
	{0, "OggS", "", "audio/ogg"},
	{0, "\x1f\x8b", "", "application/gzip"},
	{0, "\x28\xb5\x2f\xfd", "", "application/zstd"},
	{0, "PK\x03\x04", "", "application/zip"},
	{0, "%PDF-", "", "application/pdf"},
	{0, "\x93NUMPY", "", "application/x-npy"},
}
