/*
 * Per-thread arenas for jansson's allocations while a staged load parses a
 * document and prepares it (service/load/load.h, fbc_load_tree_staged).
 *
 * A document's json_t tree lives only for its prepare call; built node by
 * node with malloc and torn down with json_decref it costs as much as the
 * parsing. With an arena the nodes are bump-allocated from one region and the
 * whole tree goes in one step (fbc_json_arena_reset), without walking it.
 *
 * fbc_json_arena_install routes jansson's malloc and free through this module
 * (json_set_alloc_funcs) for the whole process. A thread without an attached
 * and enabled arena allocates with malloc as before; free releases with free()
 * whatever is not inside the arena region, and does nothing for what is, so
 * trees of either kind may meet (a thread's arena is reserved address space,
 * one region for all threads: membership is one comparison).
 *
 * Rules for code that runs with the arena enabled (the loader's parsers and a
 * stage's prepare): json_t values made there do not outlive the next reset
 * (fbc_load_stage documents it for prepare), and memory jansson hands to its
 * caller (json_dumps) must not reach free(): nothing there does.
 * Thread-safety: every function acts on the calling thread's arena only.
 */
#ifndef FBC_JSON_ARENA_H
#define FBC_JSON_ARENA_H

#include <stdbool.h>
#include <stddef.h>

/* Route jansson's allocations through this module. Call once, before any
 * other thread exists (fbcd's main); without it every function below is a
 * no-op and attach returns false. */
void fbc_json_arena_install(void);

/* Give the calling thread an arena (address space; memory as it is used).
 * False when none is available (not installed, address space refused, every
 * arena taken): the thread goes on with malloc. */
bool fbc_json_arena_attach(void);

/* Return the thread's arena and its memory (after a reset). */
void fbc_json_arena_detach(void);

/* While on, jansson allocations of this thread come from its arena (attached
 * threads only). Returns whether it is on. */
bool fbc_json_arena_enable(bool on);

/* Whether the calling thread's jansson allocations go to its arena now. */
bool fbc_json_arena_active(void);

/* Forget everything allocated in the thread's arena: every json_t made since
 * the last reset is gone at once (json_decref is not needed, nor allowed after). */
void fbc_json_arena_reset(void);

/* Bytes allocated in the thread's arena since its last reset (tests). */
size_t fbc_json_arena_used(void);

#endif
