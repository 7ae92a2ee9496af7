/* pcut.c - the power-cut recorder of `make stress` (tests/stress/powercut.py), LD_PRELOADed into
 * a real `tablectl simulate` process.
 *
 * It models the disk the way SQLite's own crash tests (src/test6.c) do: every write to a watched
 * file (the journal, its -wal, its anchor) that has not been made durable by fsync/fdatasync of
 * that file may be lost, torn or reordered at the cut. The writes still reach the file (the
 * page cache, as a SIGKILL leaves it); what it adds is an undo log: before each watched write it
 * appends to PCUT_LOG the old bytes and size of the range, and after each completed sync a
 * barrier. After the process dies the harness rebuilds, per file, the last synced image and the
 * versions each dirty sector held since, and picks one per sector: that is the disk after the
 * power cut.
 *
 *   PCUT_LOG      the log file (written with O_APPEND; never synced: the harness outlives us)
 *   PCUT_WATCH    comma-separated absolute paths of the watched files
 *   PCUT_KILL_AT  kill the process (SIGKILL) at the Nth watched operation (write or sync), 0 none
 *   PCUT_KILL_AFTER  1: perform that operation first, 0: die before it
 *
 * Record layout (little-endian): 'W' u32 pathlen path u64 off u64 len u64 oldsize u64 oldlen
 * old[oldlen] new[len]; 'S' u32 pathlen path; 'T' u32 pathlen path u64 newsize u64 oldsize
 * u64 taillen tail[taillen].
 * Test-only: built by the stress harness with the system C compiler, never installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAXFD 65536
#define MAXWATCH 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int inited = 0;
static int logfd = -1;
static char watch[MAXWATCH][4096];
static int nwatch = 0;
static long kill_at = 0, kill_after = 0, ops = 0;
static signed char fdstate[MAXFD]; /* 0 unknown, -1 not watched, 1+i watched[i] */

static ssize_t (*r_write)(int, const void *, size_t);
static ssize_t (*r_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*r_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*r_pread)(int, void *, size_t, off_t);
static int (*r_fsync)(int);
static int (*r_fdatasync)(int);
static int (*r_ftruncate)(int, off_t);
static int (*r_ftruncate64)(int, off_t);
static int (*r_close)(int);

static void init(void) {
    if (inited) return;
    r_write = dlsym(RTLD_NEXT, "write");
    r_pwrite = dlsym(RTLD_NEXT, "pwrite");
    r_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    r_pread = dlsym(RTLD_NEXT, "pread");
    r_fsync = dlsym(RTLD_NEXT, "fsync");
    r_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    r_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
    r_ftruncate64 = dlsym(RTLD_NEXT, "ftruncate64");
    r_close = dlsym(RTLD_NEXT, "close");
    const char *w = getenv("PCUT_WATCH");
    if (w) {
        const char *p = w;
        while (*p && nwatch < MAXWATCH) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n > 0 && n < sizeof watch[0]) {
                memcpy(watch[nwatch], p, n);
                watch[nwatch][n] = 0;
                nwatch++;
            }
            if (!e) break;
            p = e + 1;
        }
    }
    const char *k = getenv("PCUT_KILL_AT");
    kill_at = k ? atol(k) : 0;
    k = getenv("PCUT_KILL_AFTER");
    kill_after = k ? atol(k) : 0;
    const char *l = getenv("PCUT_LOG");
    if (l) {
        int (*r_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
        logfd = r_open(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    }
    inited = 1;
}

static int watched(int fd) {
    if (fd < 0 || fd >= MAXFD || logfd < 0) return -1;
    if (fdstate[fd] == 0) {
        char link[64], path[4096];
        int n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = (int)readlink(link, path, sizeof path - 1);
        fdstate[fd] = -1;
        if (n > 0) {
            path[n] = 0;
            for (int i = 0; i < nwatch; i++)
                if (strcmp(path, watch[i]) == 0) fdstate[fd] = (signed char)(1 + i);
        }
    }
    return fdstate[fd] > 0 ? fdstate[fd] - 1 : -1;
}

static void out(const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = r_write(logfd, c, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR) continue;
            return;
        }
        c += w;
        n -= (size_t)w;
    }
}
static void out64(uint64_t v) { out(&v, 8); }
static void outpath(char type, int w) {
    uint32_t n = (uint32_t)strlen(watch[w]);
    out(&type, 1);
    out(&n, 4);
    out(watch[w], n);
}

static void maybe_kill(int after) {
    if (kill_at > 0 && ops == kill_at && kill_after == after) kill(getpid(), SIGKILL);
}

static uint64_t fsize(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void log_write(int w, int fd, const void *buf, size_t len, uint64_t off) {
    uint64_t old = fsize(fd);
    uint64_t oldlen = off < old ? (old - off < len ? old - off : len) : 0;
    char *prev = oldlen ? malloc(oldlen) : NULL;
    if (oldlen && (!prev || r_pread(fd, prev, oldlen, (off_t)off) != (ssize_t)oldlen)) oldlen = 0;
    outpath('W', w);
    out64(off);
    out64(len);
    out64(old);
    out64(oldlen);
    if (oldlen) out(prev, oldlen);
    out(buf, len);
    free(prev);
}

static ssize_t do_pwrite(ssize_t (*real)(int, const void *, size_t, off_t), int fd,
                         const void *buf, size_t len, off_t off) {
    init();
    int w = watched(fd);
    if (w < 0) return real(fd, buf, len, off);
    pthread_mutex_lock(&mu);
    ops++;
    maybe_kill(0);
    log_write(w, fd, buf, len, (uint64_t)off);
    ssize_t r = real(fd, buf, len, off);
    maybe_kill(1);
    pthread_mutex_unlock(&mu);
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) {
    init();
    return do_pwrite(r_pwrite, fd, buf, len, off);
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) {
    init();
    return do_pwrite(r_pwrite64, fd, buf, len, off);
}

ssize_t write(int fd, const void *buf, size_t len) {
    init();
    int w = watched(fd);
    if (w < 0) return r_write(fd, buf, len);
    pthread_mutex_lock(&mu);
    ops++;
    maybe_kill(0);
    int fl = fcntl(fd, F_GETFL);
    uint64_t off = (fl & O_APPEND) ? fsize(fd) : (uint64_t)lseek(fd, 0, SEEK_CUR);
    log_write(w, fd, buf, len, off);
    ssize_t r = r_write(fd, buf, len);
    maybe_kill(1);
    pthread_mutex_unlock(&mu);
    return r;
}

static int do_sync(int (*real)(int), int fd) {
    int w = watched(fd);
    if (w < 0) return real(fd);
    pthread_mutex_lock(&mu);
    ops++;
    maybe_kill(0);
    int r = real(fd);
    if (r == 0) outpath('S', w); /* durable only once the sync returned */
    maybe_kill(1);
    pthread_mutex_unlock(&mu);
    return r;
}
int fsync(int fd) {
    init();
    return do_sync(r_fsync, fd);
}
int fdatasync(int fd) {
    init();
    return do_sync(r_fdatasync, fd);
}

static int do_trunc(int (*real)(int, off_t), int fd, off_t size) {
    int w = watched(fd);
    if (w < 0) return real(fd, size);
    pthread_mutex_lock(&mu);
    uint64_t old = fsize(fd);
    uint64_t taillen = old > (uint64_t)size ? old - (uint64_t)size : 0;
    char *tail = taillen ? malloc(taillen) : NULL;
    if (taillen && (!tail || r_pread(fd, tail, taillen, size) != (ssize_t)taillen)) taillen = 0;
    outpath('T', w);
    out64((uint64_t)size);
    out64(old);
    out64(taillen);
    if (taillen) out(tail, taillen);
    free(tail);
    int r = real(fd, size);
    pthread_mutex_unlock(&mu);
    return r;
}
int ftruncate(int fd, off_t size) {
    init();
    return do_trunc(r_ftruncate, fd, size);
}
int ftruncate64(int fd, off_t size) {
    init();
    return do_trunc(r_ftruncate64, fd, size);
}

int close(int fd) {
    init();
    if (fd >= 0 && fd < MAXFD) fdstate[fd] = 0;
    return r_close(fd);
}
