#include "textflag.h"

// func line(p *byte)
TEXT ·line(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func span(p *byte, n int)
TEXT ·span(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), BX
	LEAQ -1(AX)(BX*1), BX // the last byte
	ANDQ $~63, AX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, BX
	JLS  loop
	RET
