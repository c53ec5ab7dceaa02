/*
 * The head deadline: a connection waiting for a request head (a new
 * connection, or a kept-alive one between requests) must complete it within
 * a fixed time, however it trickles. libmicrohttpd's connection timeout only
 * measures silence, so a client sending one byte every few seconds kept a
 * connection (and in thread-per-connection mode a thread) forever. A watch
 * thread shuts down the socket of every connection past its deadline; the
 * connection's own thread then sees end of file and closes it.
 *
 * Entries are removed (fbc_head_watch_remove) before libmicrohttpd closes
 * the socket (its CLOSED notification comes first), and the watch shuts
 * sockets down under the same lock, so it never touches a reused descriptor.
 */
#ifndef FBC_HTTP_HEADWATCH_H
#define FBC_HTTP_HEADWATCH_H

#include <stdint.h>

typedef struct fbc_head_watch fbc_head_watch;
typedef struct fbc_head_entry fbc_head_entry;

/* deadline_s > 0; 0 from fbc_head_watch_start, -1 when out of resources. */
int fbc_head_watch_start(fbc_head_watch **out, unsigned deadline_s);
void fbc_head_watch_stop(fbc_head_watch *w);

/* A new connection on fd, waiting for its first head (NULL: out of memory,
 * the connection is then not watched). */
fbc_head_entry *fbc_head_watch_add(fbc_head_watch *w, int fd);
void fbc_head_watch_done(fbc_head_watch *w, fbc_head_entry *e);	 /* head complete */
void fbc_head_watch_again(fbc_head_watch *w, fbc_head_entry *e); /* waiting for the next */
void fbc_head_watch_remove(fbc_head_watch *w, fbc_head_entry *e);

/* Connections shut down for missing their deadline so far. */
uint64_t fbc_head_watch_expired(fbc_head_watch *w);

#endif
