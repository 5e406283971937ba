/* rss_exec: run a command and report ITS peak RSS and wall time (used by inspect_bench.py).
 *
 *   rss_exec REPORT_FILE CMD [ARGS...]
 *
 * Why: on Linux a child's ru_maxrss (from wait4) is never below the RSS of the process it was forked /
 * vforked from, because exec() folds the old address space's high-water RSS into the child's maxrss.
 * Spawned straight from the Python harness, every command would report >= the harness's own peak RSS
 * (~14 MiB; /bin/true included). This launcher is tiny, so the command it forks starts from a ~1 MiB
 * address space and the wait4() figure is the command's own.
 *
 * Writes one line to REPORT_FILE: "maxrss_kib=N wall_ns=N utime_us=N stime_us=N" and exits with the
 * command's exit code (128+signal if it was killed; 127 if it could not be executed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: rss_exec REPORT_FILE CMD [ARGS...]\n");
        return 2;
    }
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("rss_exec: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "rss_exec: cannot execute %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("rss_exec: wait4");
            return 127;
        }
    }
    long long wall = now_ns() - t0;
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror("rss_exec: report file");
        return 127;
    }
    fprintf(f, "maxrss_kib=%ld wall_ns=%lld utime_us=%lld stime_us=%lld\n", ru.ru_maxrss, wall,
            (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
            (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec);
    fclose(f);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 127;
}
