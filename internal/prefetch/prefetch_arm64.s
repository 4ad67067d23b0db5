#include "textflag.h"

// func line(p *byte)
TEXT ·line(SB), NOSPLIT, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	RET

// func span(p *byte, n int)
TEXT ·span(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	ADD  R0, R1, R1
	SUB  $1, R1, R1
	AND  $~63, R0, R0
loop:
	PRFM (R0), PLDL1KEEP
	ADD  $64, R0, R0
	CMP  R1, R0
	BLS  loop
	RET
