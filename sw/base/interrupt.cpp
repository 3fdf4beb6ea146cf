// Cooperative stop on SIGINT/SIGTERM (nasa/interrupt.h).
#include "nasa/interrupt.h"

#include <csignal>
#include <cstring>

#include <unistd.h>

#include <fmt/core.h>

namespace nasa {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) {
  if (g_signal != 0) {
    // The second signal: the user does not want to wait for the current unit of work.
    static const char msg[] = "\nnasa: second signal, stopping now\n";
    const ssize_t unused = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)unused;
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
  static const char msg[] =
      "\nnasa: stopping after the current step (press Ctrl-C again to stop at once)\n";
  const ssize_t unused = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)unused;
}

}  // namespace

Interrupted::Interrupted(int sig, const std::string& where)
    : std::runtime_error(fmt::format("interrupted by {} during {}",
                                     sig == SIGTERM ? "SIGTERM" : "SIGINT", where)),
      signal(sig) {}

void install_interrupt_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return g_signal; }

void throw_if_interrupted(const char* where) {
  if (g_signal != 0) throw Interrupted(g_signal, where);
}

}  // namespace nasa
