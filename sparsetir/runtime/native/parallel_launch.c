/*
 * sparsetir's launcher for the parallel loops of the CPU kernels TVM generates.
 *
 * TVM compiles a parallel loop into a lambda and a call through the kernel library's global
 * pointer __TVMBackendParallelLaunch; sparsetir points that global here
 * (sparsetir/runtime/parallel.py). TVM's own launcher runs task k on its k-th pool worker and
 * waits for all of them. When another thread holds a worker's core, that is a wait of a whole
 * scheduler tick (4 ms) per call: after every torch op (torch's OpenMP threads keep spinning
 * for milliseconds) and whenever another process runs on a core.
 *
 * Here the loop is cut into chunks that are *claimed*: whoever runs -- the calling thread, an
 * OpenMP thread, a worker of our pool -- takes the next unclaimed chunk, so no chunk waits for
 * a thread that has not shown up. The helpers come from one of two places:
 *
 *  - the OpenMP runtime already loaded in the process (torch's libgomp), when the Python side
 *    found one: after a torch op its threads are spinning and take our chunks at once, instead
 *    of fighting our threads for the cores;
 *  - else a pool of our own, whose workers spin briefly after a job and then sleep in a futex
 *    (a woken thread gets a core promptly; a spinning one waits for the tick).
 *
 * OpenMP's join waits for every thread of the team, even one that arrives after all chunks
 * are done. When a helper arrives that late (a descheduled thread: another process holds its
 * core), launches go to the pool for a while, with a doubling back-off, then OpenMP is tried
 * again. Before any of this, a launch takes no more threads than the cores that other
 * processes' runnable threads leave free (below). The pool's workers sleep soon
 * after a job, and at once while contention was seen lately; its caller waits only for chunks
 * a helper claimed, spinning briefly and then asleep. When the helpers finish long after the
 * caller (longer than the late limit and than its own work: a helper was descheduled
 * mid-chunk), the pool runs with half as many helpers for a while, down to none, with the same
 * back-off. A launch from inside another launch, or from a second thread
 * while the pool is busy, runs serially on its caller.
 *
 * Linux only (futex); built by runtime/parallel.py with the system C compiler.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

/* TVM's parallel ABI (tvm/ffi/extra/c_env_api.h). */
typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

/* The OpenMP entry points (GOMP ABI: libgomp; LLVM's libomp and Intel's libiomp5 export it). */
typedef void (*GompParallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
typedef int (*OmpInt)(void);

enum { MAX_WORKERS = 1024, CHUNK_BITS = 20 };
#define CHUNK_MASK ((UINT64_C(1) << CHUNK_BITS) - 1)

/* Settings, written by the Python side. */
static int chunks_per_thread = 4;
static int threads = 1;                   /* the pool's threads, the caller included */
static long spin_ns = 50000;              /* how long a pool worker spins before sleeping */
static long late_ns = 300000;             /* an OpenMP thread arriving this late is "late" */
static long wait_spin_ns = 20000;         /* how long a caller spins for helpers before sleeping */
static long backoff_min_ns = 20000000;    /* first pool period after a late arrival */
static long backoff_max_ns = 1280000000;

static GompParallel omp_parallel;
static OmpInt omp_thread_num, omp_max_threads;
static int omp_after_fork;                /* libgomp's team does not survive fork() */
static _Atomic long omp_avoid_until;
static _Atomic long omp_backoff;

static _Atomic uint64_t stat_openmp, stat_pool, stat_serial, stat_late, stat_pool_late;

/* After a long wait for a descheduled helper the pool runs with at most `pool_limit` helpers
   until `pool_limit_until`. */
static _Atomic long pool_limit_until;
static _Atomic int pool_limit;
static _Atomic long pool_backoff;

/* ---- How crowded the machine is ----
 *
 * Threads of other processes that are runnable take cores a launch's helpers would need, and
 * a helper that shares a core with one is preempted at random (mid-chunk: the launch waits a
 * time slice). Before the late arrivals and long waits above ever happen, a launch uses no more
 * threads than the cores that other processes leave free: the kernel's count of runnable
 * threads (/proc/loadavg, a system-wide count of the moment), less the caller and the helpers
 * of this process that may be spinning, read at most every crowd_period_ns (the fewer of two
 * samples in a row). Only where the process may run on every online CPU (else the count covers
 * cores it cannot use).
 */
static long now_ns(void);

static long crowd_period_ns = 5000000;    /* 0: never limit the team */
static int crowd_cores = -1;              /* the online CPUs, all usable (0: count not usable) */
static _Atomic long crowd_sampled_at;
static _Atomic int crowd_others;          /* others' runnable threads, as the samples say */
static _Atomic int crowd_last;            /* the last sample's count */
static _Atomic int pool_spinning;         /* pool workers spinning now (they are runnable) */
static _Atomic uint64_t stat_crowded;

static int usable_cores(void) {
  cpu_set_t set;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 1 || sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set) == online ? (int)online : 0;
}

/* The runnable threads of the whole machine now, or -1. */
static int runnable_now(void) {
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return -1;
  text[n] = 0;
  char* field = text;  /* "0.52 0.58 0.59 3/467 12345": the fourth field's first number */
  for (int i = 0; i < 3 && field; i++) {
    field = strchr(field, ' ');
    if (field) field++;
  }
  return field ? atoi(field) : -1;
}

/* At most `team` threads, fewer where other processes' runnable threads leave fewer cores;
   `ours` of this process's threads besides the caller may be runnable (spinning) now. */
static int uncrowded(int team, int ours) {
  if (crowd_cores < 0) crowd_cores = usable_cores();
  if (crowd_cores <= 0 || crowd_period_ns <= 0) return team;
  long now = now_ns();
  long sampled = atomic_load_explicit(&crowd_sampled_at, memory_order_relaxed);
  if (now - sampled > crowd_period_ns &&
      atomic_compare_exchange_strong(&crowd_sampled_at, &sampled, now)) {
    int running = runnable_now();
    if (running > 0) {
      /* the fewer of this count and the last: a busy process is there in both, a kernel thread
         or a short job that happened to be runnable at one instant is not */
      int others = running - 1 - ours, last = atomic_exchange(&crowd_last, others);
      if (last < others) others = last;
      atomic_store_explicit(&crowd_others, others > 0 ? others : 0, memory_order_relaxed);
    }
  }
  int free = crowd_cores - atomic_load_explicit(&crowd_others, memory_order_relaxed);
  if (free < team) {
    atomic_fetch_add_explicit(&stat_crowded, 1, memory_order_relaxed);
    return free > 1 ? free : 1;
  }
  return team;
}

/* Calls made inside sparsetir_parallel_serial_begin/end on this thread run serially: a caller
   that knows the work is tiny (sparsetir.ops) saves the launch and its scheduling hazards. */
static __thread int serial_depth;

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int run_serial(FTVMParallelLambda f, void* cdata) {
  TVMParallelGroupEnv env = {NULL, 1};
  atomic_fetch_add_explicit(&stat_serial, 1, memory_order_relaxed);
  return f(0, &env, cdata);
}

/* ---- OpenMP: the chunks of one launch, claimed by the team's threads ---- */

struct omp_job {
  FTVMParallelLambda f;
  void* cdata;
  int chunks;
  long start;
  _Atomic int next;
  _Atomic int failed;
  _Atomic int late;
};

static void omp_body(void* data) {
  struct omp_job* job = (struct omp_job*)data;
  /* Arriving after every chunk was claimed, long after the launch: its core was taken (the
     join waited for it all the same). A helper arriving late but in time for chunks takes
     them: a sleeping thread may take that long to wake on an idle virtual CPU. */
  if (omp_thread_num() != 0 && atomic_load_explicit(&job->next, memory_order_relaxed) >= job->chunks &&
      now_ns() - job->start > late_ns)
    atomic_store_explicit(&job->late, 1, memory_order_relaxed);
  TVMParallelGroupEnv env = {NULL, job->chunks};
  for (;;) {
    int chunk = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
    if (chunk >= job->chunks) break;
    if (job->f(chunk, &env, job->cdata) != 0) atomic_store_explicit(&job->failed, 1, memory_order_relaxed);
  }
}

/* The next back-off period after `previous` (0: none yet). */
static long next_backoff(long previous) {
  if (previous < backoff_min_ns) return backoff_min_ns;
  return previous * 2 > backoff_max_ns ? backoff_max_ns : previous * 2;
}

static int omp_launch(FTVMParallelLambda f, void* cdata, int team, int chunks) {
  struct omp_job job = {f, cdata, chunks, now_ns(), 0, 0, 0};
  omp_parallel(omp_body, &job, (unsigned)team, 0);
  atomic_fetch_add_explicit(&stat_openmp, 1, memory_order_relaxed);
  if (atomic_load(&job.late)) {
    long backoff = next_backoff(atomic_load(&omp_backoff));
    atomic_store(&omp_backoff, backoff);
    atomic_store(&omp_avoid_until, now_ns() + backoff);
    atomic_fetch_add_explicit(&stat_late, 1, memory_order_relaxed);
  } else {
    atomic_store(&omp_backoff, 0);
  }
  return atomic_load(&job.failed) ? -1 : 0;
}

/* ---- The pool: one job at a time, published under a generation number ---- */

static struct {
  _Atomic uint64_t state;                 /* generation << CHUNK_BITS | next unclaimed chunk */
  _Atomic(FTVMParallelLambda) f;
  _Atomic(void*) cdata;
  _Atomic int chunks;
  _Atomic int done;                       /* chunks finished in this generation (a futex word) */
  _Atomic int caller_waits;               /* the caller sleeps on `done` */
  _Atomic long finished_at;               /* when the last chunk was done */
  _Atomic int failed;
  _Atomic uint32_t wake;                  /* futex word, bumped by each publication */
  _Atomic int sleepers;
  _Atomic int busy;                       /* a caller owns the pool */
  _Atomic int active;                     /* workers that take part (the others sleep) */
  int workers;                            /* workers started */
  pthread_mutex_t lock;                   /* guards starting workers */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Claim and run chunks of generation `gen` until none is left. A worker reads the job's fields
   before claiming; the claim (a compare-and-swap on state) succeeds only while the generation
   is still `gen` with chunks unclaimed, so the caller cannot have moved on meanwhile. */
static void pool_work(uint64_t gen) {
  for (;;) {
    uint64_t state = atomic_load_explicit(&pool.state, memory_order_acquire);
    if ((state >> CHUNK_BITS) != gen) return;
    FTVMParallelLambda f = atomic_load_explicit(&pool.f, memory_order_relaxed);
    void* cdata = atomic_load_explicit(&pool.cdata, memory_order_relaxed);
    int chunks = atomic_load_explicit(&pool.chunks, memory_order_relaxed);
    uint64_t chunk = state & CHUNK_MASK;
    if ((int)chunk >= chunks) return;
    if (!atomic_compare_exchange_weak_explicit(&pool.state, &state, state + 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    TVMParallelGroupEnv env = {NULL, chunks};
    if (f((int)chunk, &env, cdata) != 0) atomic_store_explicit(&pool.failed, 1, memory_order_relaxed);
    if (atomic_fetch_add(&pool.done, 1) + 1 == chunks) atomic_store(&pool.finished_at, now_ns());
    if (atomic_load(&pool.caller_waits)) syscall(SYS_futex, &pool.done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  }
}

static uint64_t generation(void) {
  return atomic_load_explicit(&pool.state, memory_order_acquire) >> CHUNK_BITS;
}

static void* pool_worker(void* arg) {
  int index = (int)(intptr_t)arg;
  uint64_t seen = generation();
  for (;;) {
    uint32_t wake = atomic_load_explicit(&pool.wake, memory_order_acquire);
    uint64_t gen = generation();
    if (gen != seen) {
      seen = gen;
      if (index < atomic_load_explicit(&pool.active, memory_order_relaxed)) pool_work(gen);
      continue;
    }
    /* Spinning keeps a worker ready for the next launch, but on a busy machine it spends the
       worker's time slice, and a worker preempted mid-chunk holds up its launch: while the
       helpers are limited after such a wait, workers sleep at once. */
    long start = now_ns();
    long until = start < atomic_load(&pool_limit_until) ? start : start + spin_ns;
    int found = 0;
    atomic_fetch_add_explicit(&pool_spinning, 1, memory_order_relaxed);
    while (!found && now_ns() < until) {
      for (int i = 0; i < 32; i++) cpu_relax();
      found = generation() != seen;
    }
    atomic_fetch_sub_explicit(&pool_spinning, 1, memory_order_relaxed);
    if (found) continue;
    atomic_fetch_add(&pool.sleepers, 1);
    if (generation() == seen) syscall(SYS_futex, &pool.wake, FUTEX_WAIT_PRIVATE, wake, NULL, NULL, 0);
    atomic_fetch_sub(&pool.sleepers, 1);
  }
  return NULL;
}

/* Start workers until `count` exist; the number that do. */
static int pool_start(int count) {
  pthread_mutex_lock(&pool.lock);
  while (pool.workers < count && pool.workers < MAX_WORKERS) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&thread, &attr, pool_worker, (void*)(intptr_t)pool.workers);
    pthread_attr_destroy(&attr);
    if (failed) break;
    pool.workers++;
  }
  int started = pool.workers;
  pthread_mutex_unlock(&pool.lock);
  return started;
}

/* Until `done` reaches `chunks`: spin up to wait_spin_ns from `since`, then sleep on the futex
   (the helpers wake the caller after each chunk while it sleeps; the timeout only bounds a
   sleep against a wake-up lost to a race it cannot have, to be safe). */
static void wait_for_helpers(int chunks, long since) {
  while (atomic_load_explicit(&pool.done, memory_order_acquire) < chunks) {
    if (now_ns() - since < wait_spin_ns) {
      for (int i = 0; i < 16; i++) cpu_relax();
      continue;
    }
    atomic_store(&pool.caller_waits, 1);
    int done = atomic_load(&pool.done);
    if (done < chunks) {
      struct timespec limit = {0, 2000000};
      syscall(SYS_futex, &pool.done, FUTEX_WAIT_PRIVATE, done, &limit, NULL, 0);
    }
    atomic_store(&pool.caller_waits, 0);
  }
}

static int pool_launch(FTVMParallelLambda f, void* cdata, int team, int chunks) {
  int helpers = team - 1;
  long start = now_ns();
  int limited = start < atomic_load(&pool_limit_until);
  if (limited && atomic_load(&pool_limit) < helpers) helpers = atomic_load(&pool_limit);
  if (helpers <= 0) return run_serial(f, cdata);
  int expected = 0;
  if (!atomic_compare_exchange_strong(&pool.busy, &expected, 1)) return run_serial(f, cdata);
  if (pool.workers < helpers) helpers = pool_start(helpers);
  atomic_store_explicit(&pool.active, helpers, memory_order_relaxed);
  atomic_store_explicit(&pool.f, f, memory_order_relaxed);
  atomic_store_explicit(&pool.cdata, cdata, memory_order_relaxed);
  atomic_store_explicit(&pool.chunks, chunks, memory_order_relaxed);
  atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
  atomic_store_explicit(&pool.failed, 0, memory_order_relaxed);
  atomic_store_explicit(&pool.finished_at, start, memory_order_relaxed);
  uint64_t gen = generation() + 1;
  atomic_store_explicit(&pool.state, gen << CHUNK_BITS, memory_order_release);
  atomic_fetch_add_explicit(&pool.wake, 1, memory_order_release);
  if (atomic_load(&pool.sleepers) > 0) syscall(SYS_futex, &pool.wake, FUTEX_WAKE_PRIVATE, MAX_WORKERS, NULL, NULL, 0);
  pool_work(gen);
  /* Only chunks a running helper claimed are left: wait for those, spinning a short while
     (a helper mid-chunk usually finishes soon), then asleep, leaving the core to whoever needs
     it (on a busy machine, perhaps the very helper the caller waits for). */
  long worked = now_ns();
  wait_for_helpers(chunks, worked);
  /* how long the helpers took past the caller's own share (not counting the caller's own
     wake-up, which on a virtual machine can be long) */
  long waited = atomic_load(&pool.finished_at) - worked;
  int failed = atomic_load(&pool.failed);
  atomic_fetch_add_explicit(&stat_pool, 1, memory_order_relaxed);
  atomic_store(&pool.busy, 0);
  if (waited > late_ns && waited > worked - start) {
    long backoff = next_backoff(atomic_load(&pool_backoff));
    atomic_store(&pool_backoff, backoff);
    atomic_store(&pool_limit, helpers / 2);
    atomic_store(&pool_limit_until, now_ns() + backoff);
    atomic_fetch_add_explicit(&stat_pool_late, 1, memory_order_relaxed);
  } else if (!limited) {
    atomic_store(&pool_backoff, 0);
  }
  return failed ? -1 : 0;
}

static void after_fork_in_child(void) {
  /* Only the forking thread exists in the child: no pool workers, and an OpenMP team that
     libgomp still believes in. */
  pool.workers = 0;
  atomic_store(&pool.busy, 0);
  pthread_mutex_init(&pool.lock, NULL);
  omp_after_fork = 1;
}

/* ---- Entry points ---- */

/* What TVM calls for every parallel loop (the signature of TVMBackendParallelLaunch). */
int sparsetir_parallel_launch(FTVMParallelLambda f, void* cdata, int num_task) {
  if (serial_depth > 0) return run_serial(f, cdata);
  int use_omp = omp_parallel != NULL && !omp_after_fork && now_ns() >= atomic_load(&omp_avoid_until);
  int omp_threads = omp_parallel != NULL && !omp_after_fork ? omp_max_threads() : 1;
  int team = threads;
  if (use_omp && omp_threads < team) team = omp_threads;
  if (team > 1) {
    /* this process's threads that may be runnable now: the OpenMP team's (spinning after the
       last torch op, or ours) and the pool's spinning workers */
    team = uncrowded(team, omp_threads - 1 + atomic_load_explicit(&pool_spinning, memory_order_relaxed));
  }
  if (team <= 1) return run_serial(f, cdata);
  int chunks = num_task > 0 ? num_task : team * chunks_per_thread;
  if (chunks > (int)CHUNK_MASK) chunks = (int)CHUNK_MASK;
  return use_omp ? omp_launch(f, cdata, team, chunks) : pool_launch(f, cdata, team, chunks);
}

void sparsetir_parallel_serial_begin(void) { serial_depth++; }

void sparsetir_parallel_serial_end(void) {
  if (serial_depth > 0) serial_depth--;
}

static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }

/* Settings; a value < 0 leaves that one unchanged. */
void sparsetir_parallel_configure(int thread_count, int chunks, long spin, long late, long backoff_min,
                                  long backoff_max) {
  pthread_once(&fork_handler_once, install_fork_handler);
  if (thread_count > 0) threads = thread_count > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : thread_count;
  if (chunks > 0) chunks_per_thread = chunks;
  if (spin >= 0) spin_ns = spin;
  if (late >= 0) late_ns = late;
  if (backoff_min >= 0) backoff_min_ns = backoff_min;
  if (backoff_max >= 0) backoff_max_ns = backoff_max;
}

/* How often the machine's runnable threads are counted (0: never, launches are not limited by
   them); < 0 leaves the setting. */
void sparsetir_parallel_configure_crowd(long period_ns) {
  if (period_ns >= 0) crowd_period_ns = period_ns;
  atomic_store(&crowd_others, 0);
  atomic_store(&crowd_last, 0);
  atomic_store(&crowd_sampled_at, 0);
}

/* Share the OpenMP runtime at these entry points (NULL: stop using OpenMP). */
void sparsetir_parallel_use_openmp(void* gomp_parallel, void* thread_num, void* max_threads) {
  omp_thread_num = (OmpInt)thread_num;
  omp_max_threads = (OmpInt)max_threads;
  omp_parallel = (GompParallel)gomp_parallel;
  atomic_store(&omp_avoid_until, 0);
  atomic_store(&omp_backoff, 0);
  atomic_store(&pool_limit_until, 0);
  atomic_store(&pool_backoff, 0);
}

/* Counters: launches on OpenMP, on the pool, serial; late OpenMP arrivals; workers started;
   long pool waits; launches given fewer threads because other processes were runnable. */
void sparsetir_parallel_stats(uint64_t out[7]) {
  out[0] = atomic_load(&stat_openmp);
  out[1] = atomic_load(&stat_pool);
  out[2] = atomic_load(&stat_serial);
  out[3] = atomic_load(&stat_late);
  out[4] = (uint64_t)pool.workers;
  out[5] = atomic_load(&stat_pool_late);
  out[6] = atomic_load(&stat_crowded);
}

/* Whether OpenMP is set aside now (after a late arrival). */
int sparsetir_parallel_openmp_avoided(void) {
  return omp_parallel != NULL && (omp_after_fork || now_ns() < atomic_load(&omp_avoid_until));
}
