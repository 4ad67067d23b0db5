// The C declarations of mlfeed's ABI shared by the Go files of package capi (see main.go).
#ifndef MLFEED_ABI_H
#define MLFEED_ABI_H
#include <stdint.h>

// mlfeed_error receives an error: its kind (0: none; see main.go), the message, and the file
// and position of a data error.
typedef struct {
	int32_t kind;
	int64_t line;    // 1-based line of a text file, or 0
	int64_t column;  // 1-based column, or 0
	int64_t offset;  // byte offset in a binary file, or -1
	char file[1024];
	char field[128];
	char message[4096];
} mlfeed_error;

#endif
