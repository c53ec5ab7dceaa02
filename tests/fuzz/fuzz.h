/*
 * Shared declarations of the libFuzzer targets in tests/fuzz/. Each target
 * file defines LLVMFuzzerTestOneInput; it is linked either with libFuzzer
 * (-fsanitize=fuzzer, meson -Dfuzz=true) or with replay.c, a plain main()
 * that runs the target over files and directories given as arguments (the
 * seed corpus, as a unit test in every build).
 *
 * Targets keep no state between inputs except read-only tables, so either
 * driver may call them any number of times; they abort() when an invariant
 * of the code under test is broken (a finding), never on bad input.
 */
#ifndef FBC_TESTS_FUZZ_H
#define FBC_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Copy of data[0..n) with a terminating NUL (malloc'd; NULL on ENOMEM). */
char *fuzz_strndup(const uint8_t *data, size_t n);

/* Split data at the first byte equal to sep: head and head_len get the
 * part before, the return value is the part after (size in rest_len), or
 * NULL when there is no separator (then head is everything). */
const uint8_t *fuzz_split(const uint8_t *data, size_t size, int sep, const uint8_t **head,
			  size_t *head_len, size_t *rest_len);

#endif
