#include "nasa/dist.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#ifdef NASA_WITH_MPI
// the C API only (Open MPI's deprecated C++ bindings are not linked)
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif

namespace nasa::dist {

namespace {
#ifdef NASA_WITH_MPI
bool g_mpi = false;  // MPI_Init_thread ran (and MPI_Finalize has not)

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw std::runtime_error(fmt::format("{}: {} failed: {}", rank_label(), what,
                                       std::string(msg, static_cast<size_t>(len))));
}

// Sums in a fixed order (MPI applies a non-commutative operation in rank order), so a sum of
// floats does not depend on the message arrival order.
template <class T>
void ordered_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] + b[i];
}
MPI_Op g_sum_f = MPI_OP_NULL, g_sum_d = MPI_OP_NULL;

// Waits for a non-blocking collective without holding a core: a rank waiting for another (rank 0
// training while the others wait for its supernet, a rank done with its shards) polls every
// millisecond instead of spinning as a blocking MPI call does.
void wait(MPI_Request& req, const char* what) {
  for (int k = 0;; ++k) {
    int done = 0;
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (k > 100) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
#endif

// Launched by mpirun (Open MPI) or another PMIx launcher.
bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}
}  // namespace

struct Comm::Impl {
#ifdef NASA_WITH_MPI
  MPI_Comm comm = MPI_COMM_NULL;
  bool owned = false;
  ~Impl() {
    if (owned && g_mpi && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
#endif
};

Comm::Comm() = default;
Comm::~Comm() = default;
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;

void Comm::count(uint64_t bytes, bool allreduce) {
  ++traffic_.collectives;
  traffic_.payload_bytes += bytes;
  if (size_ <= 1) return;
  const auto n = static_cast<uint64_t>(size_);
  if (allreduce) {
    // ring all-reduce: reduce-scatter then all-gather, each (n-1) chunks of bytes/n
    const uint64_t b = 2 * (n - 1) * ((bytes + n - 1) / n);
    traffic_.sent_bytes += b;
    traffic_.received_bytes += b;
  } else if (root()) {
    traffic_.sent_bytes += bytes;  // binomial tree: the root sends once per level it leads
  } else {
    traffic_.received_bytes += bytes;
  }
}

void Comm::reduce_raw(void* data, size_t n, size_t bytes, Kind kind) {
  count(bytes, true);
#ifdef NASA_WITH_MPI
  if (size_ > 1 && n > 0) {
    const MPI_Datatype type = kind == Kind::U64   ? MPI_UINT64_T
                              : kind == Kind::F64 ? MPI_DOUBLE
                                                  : MPI_FLOAT;
    const MPI_Op op = kind == Kind::U64      ? MPI_SUM
                      : kind == Kind::F64    ? g_sum_d
                      : kind == Kind::F32Max ? MPI_MAX
                                             : g_sum_f;
    MPI_Request req;
    check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), type, op, impl_->comm, &req),
          "MPI_Iallreduce");
    wait(req, "MPI_Iallreduce");
  }
#else
  (void)data;
  (void)n;
  (void)kind;
#endif
}

void Comm::sum(std::span<uint64_t> v) { reduce_raw(v.data(), v.size(), v.size_bytes(), Kind::U64); }
void Comm::sum(std::span<double> v) { reduce_raw(v.data(), v.size(), v.size_bytes(), Kind::F64); }
void Comm::sum(std::span<float> v) { reduce_raw(v.data(), v.size(), v.size_bytes(), Kind::F32); }
void Comm::max(std::span<float> v) { reduce_raw(v.data(), v.size(), v.size_bytes(), Kind::F32Max); }

void Comm::broadcast(std::vector<uint8_t>& bytes) {
  uint64_t n = bytes.size();
#ifdef NASA_WITH_MPI
  if (size_ > 1) {
    MPI_Request req;
    check(MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, impl_->comm, &req), "MPI_Ibcast");
    wait(req, "MPI_Ibcast");
    bytes.resize(n);
    if (n > 0) {
      check(MPI_Ibcast(bytes.data(), static_cast<int>(n), MPI_BYTE, 0, impl_->comm, &req),
            "MPI_Ibcast");
      wait(req, "MPI_Ibcast");
    }
  }
#endif
  count(n, false);
}

void Comm::broadcast(std::string& s) {
  std::vector<uint8_t> b(s.begin(), s.end());
  broadcast(b);
  s.assign(b.begin(), b.end());
}

std::vector<std::vector<uint8_t>> Comm::gather(std::span<const uint8_t> mine) {
  std::vector<std::vector<uint8_t>> all(static_cast<size_t>(size_));
  std::vector<uint64_t> sizes(static_cast<size_t>(size_), 0);
  sizes[static_cast<size_t>(rank_)] = mine.size();
  sum(sizes);
  uint64_t total = 0;
  for (uint64_t n : sizes) total += n;
  count(total, false);
  if (size_ <= 1) {
    all[0].assign(mine.begin(), mine.end());
    return all;
  }
#ifdef NASA_WITH_MPI
  std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
  int off = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    counts[r] = static_cast<int>(sizes[r]);
    displs[r] = off;
    off += counts[r];
  }
  std::vector<uint8_t> buf(total);
  MPI_Request req;
  check(MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, buf.data(),
                        counts.data(), displs.data(), MPI_BYTE, impl_->comm, &req),
        "MPI_Iallgatherv");
  wait(req, "MPI_Iallgatherv");
  for (size_t r = 0; r < sizes.size(); ++r) {
    all[r].assign(buf.begin() + displs[r], buf.begin() + displs[r] + counts[r]);
  }
#endif
  return all;
}

std::vector<std::string> Comm::gather(const std::string& mine) {
  std::vector<std::string> out;
  for (const auto& b : gather(
           std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(mine.data()), mine.size()))) {
    out.emplace_back(b.begin(), b.end());
  }
  return out;
}

void Comm::barrier() {
  count(0, false);
#ifdef NASA_WITH_MPI
  if (size_ > 1) {
    MPI_Request req;
    check(MPI_Ibarrier(impl_->comm, &req), "MPI_Ibarrier");
    wait(req, "MPI_Ibarrier");
  }
#endif
}

Comm Comm::dup() const {
  Comm c;
  c.rank_ = rank_;
  c.size_ = size_;
#ifdef NASA_WITH_MPI
  if (size_ > 1) {
    c.impl_ = std::make_unique<Impl>();
    check(MPI_Comm_dup(impl_->comm, &c.impl_->comm), "MPI_Comm_dup");
    c.impl_->owned = true;
  }
#endif
  return c;
}

Comm& world() {
  static Comm w;
  return w;
}

bool available() {
#ifdef NASA_WITH_MPI
  return true;
#else
  return false;
#endif
}

void init(int& argc, char**& argv) {
#ifdef NASA_WITH_MPI
  if (g_mpi || !launched_by_mpirun()) return;
  int provided = 0;
  // threads of one rank run their own searches, each on its own Comm (dup())
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Init_thread failed");
  }
  g_mpi = true;
  // errors come back as codes (check() turns them into exceptions naming the rank)
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Op_create(&ordered_sum<float>, 0, &g_sum_f);
  MPI_Op_create(&ordered_sum<double>, 0, &g_sum_d);
  Comm& w = world();
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size_);
  w.impl_ = std::make_unique<Comm::Impl>();
  w.impl_->comm = MPI_COMM_WORLD;
  if (w.size_ > 1 && provided < MPI_THREAD_MULTIPLE) {
    throw std::runtime_error(fmt::format(
        "{}: this MPI library does not support MPI_THREAD_MULTIPLE (needed by --threads > 1)",
        rank_label()));
  }
#else
  (void)argc;
  (void)argv;
  if (launched_by_mpirun() && std::getenv("OMPI_COMM_WORLD_SIZE") &&
      std::strcmp(std::getenv("OMPI_COMM_WORLD_SIZE"), "1") != 0) {
    throw std::runtime_error(
        "started by mpirun on several ranks, but this nasa was built without MPI "
        "(install libopenmpi-dev and rebuild: docs/mpi.md)");
  }
#endif
}

void finalize() {
#ifdef NASA_WITH_MPI
  if (!g_mpi) return;
  world().impl_.reset();
  MPI_Op_free(&g_sum_f);
  MPI_Op_free(&g_sum_d);
  MPI_Finalize();
  g_mpi = false;
#endif
}

std::string rank_label() {
  const Comm& w = world();
  return w.size() > 1 ? fmt::format("rank {} of {}", w.rank(), w.size()) : std::string();
}

void abort_job(int code) {
#ifdef NASA_WITH_MPI
  if (g_mpi && world().size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

std::pair<size_t, size_t> share(size_t n, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw std::invalid_argument(fmt::format("share: rank {} of {}", rank, size));
  }
  const auto r = static_cast<size_t>(rank), s = static_cast<size_t>(size);
  return {n * r / s, n * (r + 1) / s};
}

}  // namespace nasa::dist
