// The processes of one job (docs/mpi.md): `mpirun -np N nasa ...` starts N ranks; rank 0 drives
// and is the only one that writes results, every rank computes its share and the shares are
// summed on every rank (so every rank takes the same decisions). Built on Open MPI when the build
// found it (NASA_WITH_MPI); without MPI, or when not started by mpirun, the world is this process
// alone and every collective is a no-op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nasa::dist {

// What this rank's collectives moved: payload bytes handed to MPI and the bytes a ring
// all-reduce / a binomial-tree broadcast sends and receives per rank for them (docs/mpi.md
// "Scale on paper"). Counted on every world, the one-process world included (where nothing is
// sent), so the scaling model can read a 1-rank run.
struct Traffic {
  uint64_t collectives = 0;     // calls
  uint64_t payload_bytes = 0;   // the buffers' sizes
  uint64_t sent_bytes = 0;      // modelled bytes this rank sends (0 with one rank)
  uint64_t received_bytes = 0;  // modelled bytes this rank receives
  Traffic& operator+=(const Traffic& o) {
    collectives += o.collectives;
    payload_bytes += o.payload_bytes;
    sent_bytes += o.sent_bytes;
    received_bytes += o.received_bytes;
    return *this;
  }
};

// A group of ranks that take part in the same collectives in the same order. Collectives of one
// Comm must not be called from two threads at once; a search per thread dups its own Comm.
class Comm {
 public:
  Comm();  // a world of one (no MPI)
  ~Comm();
  Comm(Comm&&) noexcept;
  Comm& operator=(Comm&&) noexcept;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }

  // In place: every rank ends with the element-wise sum over the ranks (in rank order, so a sum
  // of floats is the same on every rank and from run to run).
  void sum(std::span<uint64_t> v);
  void sum(std::span<double> v);
  void sum(std::span<float> v);
  // In place: the element-wise maximum over the ranks.
  void max(std::span<float> v);
  // Rank 0's bytes / string to every rank.
  void broadcast(std::vector<uint8_t>& bytes);
  void broadcast(std::string& s);
  // Every rank's bytes, in rank order, on every rank.
  std::vector<std::vector<uint8_t>> gather(std::span<const uint8_t> mine);
  std::vector<std::string> gather(const std::string& mine);
  void barrier();
  // A new group of the same ranks whose collectives never mix with this one's (collective:
  // every rank calls it in the same order).
  Comm dup() const;
  const Traffic& traffic() const { return traffic_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, size_ = 1;
  Traffic traffic_;
  friend Comm& world();
  friend void init(int& argc, char**& argv);
  friend void finalize();
  void count(uint64_t bytes, bool allreduce);
  enum class Kind { U64, F64, F32, F32Max };
  void reduce_raw(void* data, size_t n, size_t bytes, Kind kind);
};

// Starts MPI when this build has it and the process was started by mpirun (Open MPI's or a PMIx
// launcher's environment); otherwise the world stays a world of one. Call once, first thing in
// main; finalize() before a normal exit.
void init(int& argc, char**& argv);
void finalize();
// This process's world (a world of one before init() or without MPI).
Comm& world();
// Whether this build can run on several ranks (it was built with MPI).
bool available();
// "rank 1 of 3" (empty with one rank): the prefix every message of a multi-rank job carries.
std::string rank_label();
// Ends every rank of the job with `code` (MPI_Abort); with one rank, std::exit(code).
[[noreturn]] void abort_job(int code);

// The first index and the end of rank `rank`'s share of n items cut into `size` contiguous parts
// that differ by at most one item.
std::pair<size_t, size_t> share(size_t n, int rank, int size);

}  // namespace nasa::dist
