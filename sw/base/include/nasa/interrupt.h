// Ctrl-C (SIGINT/SIGTERM) stops a long job cleanly: the signal only sets a flag, and the job's
// loops (training steps, search generations, evaluation pieces) poll it between units of work,
// so no file is left half written and the job can be resumed. A second signal ends the process
// at once.
#pragma once

#include <stdexcept>
#include <string>

namespace nasa {

// Thrown by throw_if_interrupted: the job was asked to stop.
struct Interrupted : std::runtime_error {
  int signal;
  Interrupted(int sig, const std::string& where);
};

// Installs the SIGINT/SIGTERM handlers (the CLI does, once; a library user may not want them).
void install_interrupt_handlers();

// The signal received since install_interrupt_handlers, or 0.
int interrupt_signal();

// Throws Interrupted naming `where` if a signal was received.
void throw_if_interrupted(const char* where);

}  // namespace nasa
