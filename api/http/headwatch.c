/* The head deadline watch (see headwatch.h). */
#include "api/http/headwatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct fbc_head_entry {
	int fd;
	bool waiting;	     /* for a head */
	struct timespec due; /* CLOCK_MONOTONIC */
	fbc_head_entry *prev, *next;
};

struct fbc_head_watch {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled to stop */
	pthread_t thread;
	bool stop;
	unsigned deadline_s;
	fbc_head_entry *head;
	uint64_t expired;
};

static void due_from_now(const fbc_head_watch *w, struct timespec *due)
{
	clock_gettime(CLOCK_MONOTONIC, due);
	due->tv_sec += w->deadline_s;
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *watch_main(void *arg)
{
	fbc_head_watch *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct timespec now, wake;
		clock_gettime(CLOCK_MONOTONIC, &now);
		for (fbc_head_entry *e = w->head; e; e = e->next) {
			if (e->waiting && before(&e->due, &now)) {
				/* the connection's thread reads end of file and closes it */
				shutdown(e->fd, SHUT_RDWR);
				e->waiting = false;
				w->expired++;
			}
		}
		/* a scan every quarter second: deadlines are whole seconds */
		wake = now;
		wake.tv_nsec += 250 * 1000 * 1000;
		if (wake.tv_nsec >= 1000000000L) {
			wake.tv_sec++;
			wake.tv_nsec -= 1000000000L;
		}
		while (!w->stop && pthread_cond_timedwait(&w->cond, &w->lock, &wake) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int fbc_head_watch_start(fbc_head_watch **out, unsigned deadline_s)
{
	fbc_head_watch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (!w)
		return -1;
	w->deadline_s = deadline_s;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void fbc_head_watch_stop(fbc_head_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	while (w->head) {
		fbc_head_entry *e = w->head;
		w->head = e->next;
		free(e);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

fbc_head_entry *fbc_head_watch_add(fbc_head_watch *w, int fd)
{
	fbc_head_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = fd;
	e->waiting = true;
	due_from_now(w, &e->due);
	pthread_mutex_lock(&w->lock);
	e->next = w->head;
	if (w->head)
		w->head->prev = e;
	w->head = e;
	pthread_mutex_unlock(&w->lock);
	return e;
}

void fbc_head_watch_done(fbc_head_watch *w, fbc_head_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&w->lock);
	e->waiting = false;
	pthread_mutex_unlock(&w->lock);
}

void fbc_head_watch_again(fbc_head_watch *w, fbc_head_entry *e)
{
	struct timespec due;

	if (!e)
		return;
	due_from_now(w, &due);
	pthread_mutex_lock(&w->lock);
	e->due = due;
	e->waiting = true;
	pthread_mutex_unlock(&w->lock);
}

void fbc_head_watch_remove(fbc_head_watch *w, fbc_head_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&w->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		w->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	pthread_mutex_unlock(&w->lock);
	free(e);
}

uint64_t fbc_head_watch_expired(fbc_head_watch *w)
{
	uint64_t n;

	pthread_mutex_lock(&w->lock);
	n = w->expired;
	pthread_mutex_unlock(&w->lock);
	return n;
}
