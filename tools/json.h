/* A minimal streaming JSON writer: correct escaping and commas, nothing else. */
#ifndef XPACK_TOOLS_JSON_H
#define XPACK_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct json {
  FILE* out;
  int depth;
  int count[JSON_MAX_DEPTH]; /* values written at each depth, for commas */
  int after_key;
} json;

void json_init(json* j, FILE* out);
void json_object(json* j);
void json_end_object(json* j);
void json_array(json* j);
void json_end_array(json* j);
void json_key(json* j, const char* key);
void json_string(json* j, const char* s);
void json_string_n(json* j, const char* s, size_t n);
void json_uint(json* j, uint64_t v);
void json_int(json* j, int64_t v);
void json_double(json* j, double v);
void json_bool(json* j, int v);
void json_null(json* j);
void json_hex64(json* j, uint64_t v); /* a 16-digit hex string */
/* Ends the document with a newline. */
void json_finish(json* j);

#endif
