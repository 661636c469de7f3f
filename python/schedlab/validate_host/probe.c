/*
 * schedlab host probe: the workloads `schedlab validate-host` runs on the real kernel.
 *
 * Built by schedlab at run time (cc -O2 -pthread) and run inside a fresh cgroup per
 * configuration. Prints one JSON object on stdout. Modes:
 *
 *   threads  -t N -d SECONDS [-f FAST] [-w WORK_US] [-s SLEEP_US] [-e] [-p] [-S SEED]
 *            FAST threads spin without pause; the other N-FAST loop: spin WORK_US of
 *            their own CPU time (CLOCK_THREAD_CPUTIME_ID), then sleep SLEEP_US (-e: an
 *            exponentially distributed sleep of that mean). -p pins thread i to online
 *            CPU i mod ncpu. Reports each thread's CPU time and iterations, and how
 *            many iterations ended on each CPU (`cpu_iterations`: how a thread's work
 *            is spread over the CPUs, e.g. a group's runtime won by one CPU).
 *   pingpong -r ROUNDS [-w WORK_US]
 *            two threads pass a byte through two pipes ROUNDS times, each spinning
 *            WORK_US per round; reports the round trips' mean, p50 and p99.
 *   timerlat -r ROUNDS -s SLEEP_US
 *            one thread sleeps SLEEP_US ROUNDS times (clock_nanosleep, relative);
 *            reports how late it woke (p50, p99, mean), as cyclictest measures.
 *   haltexit -r ROUNDS -s SLEEP_US [-b]
 *            timerlat on the last allowed CPU with 1 ns of timer slack, absolute
 *            deadlines; -b keeps that CPU busy with a SCHED_IDLE spinner (the wakeup
 *            preempts it at once, so the CPU never halts). The difference between the
 *            two is what leaving the halted state costs after SLEEP_US idle.
 *   spincal  what spin_cpu() costs here: the CPU time of one step of its loop (1000
 *            additions and one CLOCK_THREAD_CPUTIME_ID read), and of one read alone.
 *            A spin of W ns runs one read, then whole steps until the clock passes W.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until this thread has used `ns` more CPU time, or until told to stop. */
static void spin_cpu(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t a = 0, b = 1;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 1000; i++) {
			uint64_t c = a + b;
			a = b;
			b = c;
		}
		if (ns && now_ns(CLOCK_THREAD_CPUTIME_ID) >= end)
			return;
	}
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull };
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* xorshift64*: a private stream per thread. */
static double uniform01(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return ((*s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

struct worker {
	pthread_t tid;
	int index, fast, pin, ncpu;
	uint64_t work_ns, sleep_ns, rng;
	int expo;
	uint64_t cpu_ns, iterations;
	uint64_t *cpu_iterations; /* per online CPU, by sched_getcpu() after each burst */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	if (w->pin) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->index % w->ncpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (w->fast) {
			spin_cpu(0);
			break;
		}
		spin_cpu(w->work_ns);
		w->iterations++;
		int cpu = sched_getcpu();
		if (cpu >= 0 && cpu < w->ncpu)
			w->cpu_iterations[cpu]++;
		uint64_t s = w->sleep_ns;
		if (w->expo)
			s = (uint64_t)(-log(1.0 - uniform01(&w->rng)) * (double)w->sleep_ns);
		if (s)
			sleep_ns(s);
	}
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void print_percentiles(uint64_t *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	double sum = 0;
	for (long i = 0; i < n; i++)
		sum += v[i];
	printf("\"count\": %ld, \"mean_ns\": %.1f, \"p50_ns\": %llu, \"p99_ns\": %llu",
	       n, n ? sum / n : 0.0, n ? (unsigned long long)v[n / 2] : 0ull,
	       n ? (unsigned long long)v[(n * 99) / 100] : 0ull);
}

static int run_threads(int n, int fast, double seconds, uint64_t work_us, uint64_t sleep_us, int expo, int pin,
		       uint64_t seed)
{
	struct worker *ws = calloc(n, sizeof(*ws));
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++) {
		ws[i] = (struct worker){ .index = i, .fast = i < fast, .pin = pin, .ncpu = (int)ncpu,
					 .work_ns = work_us * 1000, .sleep_ns = sleep_us * 1000, .expo = expo,
					 .rng = (seed + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull,
					 .cpu_iterations = calloc(ncpu, sizeof(uint64_t)) };
		if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) != 0) {
			fprintf(stderr, "probe: pthread_create failed\n");
			return 1;
		}
	}
	sleep_ns((uint64_t)(seconds * 1e9));
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(ws[i].tid, NULL);
	uint64_t wall = now_ns(CLOCK_MONOTONIC) - t0;
	printf("{\"mode\": \"threads\", \"wall_ns\": %llu, \"threads\": [", (unsigned long long)wall);
	for (int i = 0; i < n; i++) {
		printf("%s{\"fast\": %d, \"cpu_ns\": %llu, \"iterations\": %llu, \"cpu_iterations\": [", i ? ", " : "",
		       ws[i].fast, (unsigned long long)ws[i].cpu_ns, (unsigned long long)ws[i].iterations);
		for (long c = 0; c < ncpu; c++)
			printf("%s%llu", c ? ", " : "", (unsigned long long)ws[i].cpu_iterations[c]);
		printf("]}");
	}
	printf("]}\n");
	return 0;
}

static int ping_fd[2], pong_fd[2];
static long pp_rounds;
static uint64_t pp_work_ns;

static void *pong_main(void *arg)
{
	(void)arg;
	char c;
	for (long i = 0; i < pp_rounds; i++) {
		if (read(ping_fd[0], &c, 1) != 1)
			break;
		if (pp_work_ns)
			spin_cpu(pp_work_ns);
		if (write(pong_fd[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static int run_pingpong(long rounds, uint64_t work_us)
{
	pthread_t t;
	char c = 'x';
	uint64_t *rt = calloc(rounds, sizeof(*rt));
	if (pipe(ping_fd) || pipe(pong_fd))
		return 1;
	pp_rounds = rounds;
	pp_work_ns = work_us * 1000;
	pthread_create(&t, NULL, pong_main, NULL);
	for (long i = 0; i < rounds; i++) {
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		if (pp_work_ns)
			spin_cpu(pp_work_ns);
		if (write(ping_fd[1], &c, 1) != 1 || read(pong_fd[0], &c, 1) != 1)
			return 1;
		rt[i] = now_ns(CLOCK_MONOTONIC) - a;
	}
	pthread_join(t, NULL);
	printf("{\"mode\": \"pingpong\", ");
	print_percentiles(rt, rounds);
	printf("}\n");
	return 0;
}

static int run_timerlat(long rounds, uint64_t sleep_us)
{
	uint64_t *late = calloc(rounds, sizeof(*late));
	for (long i = 0; i < rounds; i++) {
		uint64_t due = now_ns(CLOCK_MONOTONIC) + sleep_us * 1000;
		sleep_ns(sleep_us * 1000);
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		late[i] = t > due ? t - due : 0;
	}
	printf("{\"mode\": \"timerlat\", ");
	print_percentiles(late, rounds);
	printf("}\n");
	return 0;
}

static void pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static int halt_cpu;

static void *idle_spinner(void *arg)
{
	struct sched_param none = { 0 };
	(void)arg;
	pin_to(halt_cpu);
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
	spin_cpu(0);
	return NULL;
}

static int run_haltexit(long rounds, uint64_t sleep_us, int busy)
{
	cpu_set_t allowed;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			halt_cpu = c;
	pin_to(halt_cpu);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_t spinner;
	if (busy)
		pthread_create(&spinner, NULL, idle_spinner, NULL);
	uint64_t *late = calloc(rounds, sizeof(*late));
	for (long i = 0; i < rounds; i++) {
		uint64_t due = now_ns(CLOCK_MONOTONIC) + sleep_us * 1000;
		struct timespec ts = { .tv_sec = due / 1000000000ull, .tv_nsec = due % 1000000000ull };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		late[i] = t > due ? t - due : 0;
	}
	if (busy) {
		atomic_store(&stop, 1);
		pthread_join(spinner, NULL);
	}
	printf("{\"mode\": \"haltexit\", \"cpu\": %d, \"busy\": %d, \"sleep_us\": %llu, ", halt_cpu, busy,
	       (unsigned long long)sleep_us);
	print_percentiles(late, rounds);
	/* Deciles, least to greatest (sorted by print_percentiles). */
	printf(", \"min_ns\": %llu, \"deciles_ns\": [", rounds ? (unsigned long long)late[0] : 0ull);
	for (int k = 0; k <= 10; k++)
		printf("%s%llu", k ? ", " : "", rounds ? (unsigned long long)late[k == 10 ? rounds - 1 : (rounds * k) / 10] : 0ull);
	/* Percentiles 0..100 (the last the max): the ladder's spread, so that one late
	 * sample of a few hundred stands for one percent of the draws, not a tenth. */
	printf("], \"percentiles_ns\": [");
	for (int k = 0; k <= 100; k++)
		printf("%s%llu", k ? ", " : "", rounds ? (unsigned long long)late[k == 100 ? rounds - 1 : (rounds * k) / 100] : 0ull);
	printf("]}\n");
	return 0;
}

static int run_spincal(void)
{
	volatile uint64_t a = 0, b = 1;
	long steps = 0, reads = 100000;
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), end = t0 + 200000000ull, t;
	do {
		for (int i = 0; i < 1000; i++) {
			uint64_t c = a + b;
			a = b;
			b = c;
		}
		steps++;
	} while ((t = now_ns(CLOCK_THREAD_CPUTIME_ID)) < end);
	uint64_t r0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < reads; i++)
		now_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t r1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("{\"mode\": \"spincal\", \"step_ns\": %.1f, \"read_ns\": %.1f}\n", (double)(t - t0) / steps,
	       (double)(r1 - r0) / reads);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: probe threads|pingpong|timerlat|haltexit|spincal [options]\n");
		return 2;
	}
	const char *mode = argv[1];
	int n = 1, fast = 0, expo = 0, pin = 0, busy = 0, opt;
	double seconds = 1.0;
	uint64_t work_us = 1000, sleep_us = 1000, seed = 1;
	long rounds = 1000;
	optind = 2;
	while ((opt = getopt(argc, argv, "t:d:f:w:s:epS:r:b")) != -1) {
		switch (opt) {
		case 't': n = atoi(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 'f': fast = atoi(optarg); break;
		case 'w': work_us = strtoull(optarg, NULL, 10); break;
		case 's': sleep_us = strtoull(optarg, NULL, 10); break;
		case 'e': expo = 1; break;
		case 'p': pin = 1; break;
		case 'S': seed = strtoull(optarg, NULL, 10); break;
		case 'r': rounds = atol(optarg); break;
		case 'b': busy = 1; break;
		default: return 2;
		}
	}
	if (!strcmp(mode, "threads"))
		return run_threads(n, fast, seconds, work_us, sleep_us, expo, pin, seed);
	if (!strcmp(mode, "pingpong"))
		return run_pingpong(rounds, work_us);
	if (!strcmp(mode, "timerlat"))
		return run_timerlat(rounds, sleep_us);
	if (!strcmp(mode, "haltexit"))
		return run_haltexit(rounds, sleep_us, busy);
	if (!strcmp(mode, "spincal"))
		return run_spincal();
	fprintf(stderr, "probe: unknown mode %s\n", mode);
	return 2;
}
