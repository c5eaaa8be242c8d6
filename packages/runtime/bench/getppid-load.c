// getppid-load: makes N getppid() system calls at about RATE calls a second (0: as fast as it
// can), then prints the calls made, the seconds taken and the CPU seconds used. The live-feed
// benchmark's workload (built with cc at bench time; nothing at test time needs a compiler).
//   cc -O2 -o getppid-load getppid-load.c && ./getppid-load 500000 1000000
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 500000;
	double rate = argc > 2 ? atof(argv[2]) : 0;
	double start = now();
	long done = 0;
	while (done < n) {
		// a slice of 1000 calls, then wait until the schedule catches up
		for (int i = 0; i < 1000 && done < n; i++, done++) syscall(SYS_getppid);
		if (rate > 0) {
			double due = start + done / rate;
			while (now() < due) {
			}
		}
	}
	double wall = now() - start;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("%ld %.6f %.6f\n", done, wall, cpu);
	return 0;
}
