/* The floor a job queue on PostgreSQL can reach: THREADS connections each
 * claiming the next queued job with a bare `SELECT … FOR UPDATE SKIP LOCKED`
 * and marking it succeeded in the same transaction, until none is left —
 * no lease, no events, no handler. Prints the jobs done and the seconds.
 *   queue_floor URL THREADS */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *url;
static long done_total;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *run(void *arg)
{
	PGconn *c = PQconnectdb(url);
	long n = 0;

	(void)arg;
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "queue_floor: %s", PQerrorMessage(c));
		exit(2);
	}
	for (;;) {
		PGresult *r = PQexec(
			c,
			"WITH j AS (SELECT id FROM jobs WHERE state = 'queued' ORDER BY priority "
			"DESC, id FOR UPDATE SKIP LOCKED LIMIT 1) UPDATE jobs SET state = "
			"'succeeded', finished_at = now() FROM j WHERE jobs.id = j.id RETURNING "
			"jobs.id");
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			fprintf(stderr, "queue_floor: %s", PQerrorMessage(c));
			exit(2);
		}
		int got = PQntuples(r);
		PQclear(r);
		if (!got)
			break;
		n++;
	}
	PQfinish(c);
	pthread_mutex_lock(&mu);
	done_total += n;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	struct timespec a, b;
	int n;

	if (argc != 3 || (n = atoi(argv[2])) < 1 || n > 64) {
		fprintf(stderr, "usage: queue_floor URL THREADS(1-64)\n");
		return 2;
	}
	url = argv[1];
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%ld %.3f\n", done_total,
	       (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
