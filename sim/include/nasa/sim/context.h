// Verilator contexts on several threads. Verilator 5.006 keeps a process-wide "last context"
// pointer that VerilatedContext's constructor and Verilated::threadContextp(ctx) write without
// synchronisation, so models on several threads at once (`nasa run`'s RTL cross-check, one model
// per thread) race on it (ThreadSanitizer, `make sanitize`). Every context of the project is
// made and made current here: those writes happen under one lock, and a thread whose current
// context is already the one it needs writes nothing (tick() runs this every cycle).
#pragma once

#include <verilated.h>

#include <memory>
#include <mutex>

namespace nasa::sim {

namespace detail {
inline std::mutex& context_mutex() {
  static std::mutex mu;
  return mu;
}
// The context this thread last made current through here (Verilator's own slot is private).
inline VerilatedContext*& current_context() {
  thread_local VerilatedContext* ctx = nullptr;
  return ctx;
}
}  // namespace detail

// A new context, current on the calling thread (as Verilator's constructor makes it).
inline std::unique_ptr<VerilatedContext> make_context() {
  const std::lock_guard<std::mutex> lock(detail::context_mutex());
  auto ctx = std::make_unique<VerilatedContext>();
  detail::current_context() = ctx.get();
  return ctx;
}

// Makes `ctx` (nullptr: none) the calling thread's current context: the one $error and the
// assertions of a model report to.
inline void make_current(VerilatedContext* ctx) {
  if (detail::current_context() == ctx) return;
  const std::lock_guard<std::mutex> lock(detail::context_mutex());
  Verilated::threadContextp(ctx);
  detail::current_context() = ctx;
}

}  // namespace nasa::sim
