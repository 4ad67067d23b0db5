package mlfeed

// RawSampler is what a Source offers when the samples of its chunks lie in memory it holds (a
// mapped file, or data read into memory) at a fixed stride, one fixed-size dense sample per
// sequence: the minibatch engine then packs minibatches straight from that memory,
// byte-swapping big-endian values as it copies them, and decodes no chunk. A randomized sweep
// then costs what a sweep in file order does (no decoded chunk goes out to memory and back),
// and the first sweep needs no memory for decoded chunks. format/idx (plain or gzip files),
// format/cbf (mapped files of one-sample sequences) and format/tfrecord (Examples of one layout
// held in memory) implement it, and the wrappers (Zip,
// Select, sources of shards, renamed streams) pass it through; every Source keeps the
// ReadChunk path, which the engine uses for any chunk RawSamples does not describe.
//
// RawSamples reports where chunk's samples of stream lie: sample q's bytes are
// b[off+q*stride : off+q*stride+size], size being the stream's Dim times its element size,
// with each element's bytes in reverse order when swap is the element size (big-endian data),
// as they are when swap is 0. b must stay valid and unchanged until the source is closed. ok
// false means the chunk must be read (the engine then calls ReadChunkReuse, which reports
// any error). It may read mapped memory: the engine calls it under internal/mmap's fault
// guard, on a thread of its scheduler, where it may also populate the chunk's pages.
type RawSampler interface {
	RawSamples(chunk, stream int) (b []byte, off, stride, swap int, ok bool)
}
