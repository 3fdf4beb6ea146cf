// A minimal parallel loop for the host runtime's embarrassingly parallel work (independent batch
// runs, searches, pieces of a test set): indices handed out one at a time to a few threads.
#pragma once

#include <cstddef>
#include <functional>

namespace nasa {

// Runs fn(0) .. fn(n-1), each once, on up to `threads` threads (the caller's included); waits for
// all and rethrows the first exception (indices not yet started are then skipped).
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace nasa
