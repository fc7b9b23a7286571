/* A developer aid for crashes the fuzzer finds in-process (pk_torch): LD_PRELOAD this library
 * (cc -shared -fPIC -o segv_backtrace.so segv_backtrace.c) and a SIGSEGV / SIGBUS / SIGABRT
 * prints the native stack to stderr (backtrace_symbols_fd: object, symbol, offset; addr2line
 * turns the offsets into lines) before the process dies as it would have. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_crash(int sig) {
  static const char head[] = "segv_backtrace: native stack\n";
  write(2, head, sizeof head - 1);
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Its own stack, so a stack overflow is reported too; backtrace() called once here, so its
 * first call (which loads libgcc_s) is not made inside the handler. */
__attribute__((constructor)) static void install(void) {
  static char alt[1 << 16];
  stack_t ss;
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  ss.ss_flags = 0;
  sigaltstack(&ss, 0);
  void* warm[1];
  backtrace(warm, 1);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, 0);
  sigaction(SIGBUS, &sa, 0);
  sigaction(SIGABRT, &sa, 0);
}
