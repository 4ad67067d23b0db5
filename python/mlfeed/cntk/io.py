"""cntk.io, CNTK 2.x's reader module, over mlfeed: the names a CNTK script takes from cntk.io,
under the same module path, so that

    from cntk.io import MinibatchSource, CTFDeserializer, StreamDef, StreamDefs

becomes `from mlfeed.cntk.io import ...`, and `import cntk as C` becomes
`import mlfeed.cntk as C` for scripts that write `C.io.MinibatchSource(...)`. See mlfeed.cntk
for what is provided and how it follows CNTK.
"""

from mlfeed.cntk import (DEFAULT_RANDOMIZATION_WINDOW_IN_CHUNKS, FULL_DATA_SWEEP,
                         INFINITELY_REPEAT, CBFDeserializer, CTFDeserializer, MinibatchData,
                         MinibatchSource, StreamDef, StreamDefs, StreamInformation)

__all__ = ["MinibatchSource", "MinibatchData", "CTFDeserializer", "CBFDeserializer",
           "StreamDef", "StreamDefs", "StreamInformation", "INFINITELY_REPEAT",
           "FULL_DATA_SWEEP", "DEFAULT_RANDOMIZATION_WINDOW_IN_CHUNKS"]
