// Private to distributed/ (MPI builds): the collective timeout. MPI has no timed collective, so a
// thread watches the collective running on the main thread; past the deadline it asks the other
// processes where they are, names the ones that fail the job, and ends this process (mpirun then
// ends the rest). The main thread's collectives stay MPI's blocking ones.
#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace linum::distributed::detail {

class Watchdog {
 public:
  // Starts the thread for process `rank` of `size`. `peers` is a communicator only the watchdog
  // uses, to answer and ask the other processes' watchdogs (MPI_COMM_NULL: MPI gives no
  // MPI_THREAD_MULTIPLE, and a timeout names no process).
  void start(MPI_Comm peers, int rank, int size, double timeout);
  // Ends the MPI use of the thread (before the communicator is freed and MPI finalised).
  void stop_peers();
  // Joins the thread.
  void stop();
  ~Watchdog() { stop(); }

  double timeout();
  void set_timeout(double seconds);
  // The main thread enters and leaves collective `what` (a string that outlives the call).
  void enter(const char* what);
  void leave();

 private:
  using Clock = std::chrono::steady_clock;
  // What a process tells a peer's watchdog that asks (sent as bytes, fixed size).
  struct Status {
    std::int64_t seq = 0;   // collectives entered so far: the same count on every process
    std::int32_t busy = 0;  // 1 while in collective number seq
    char what[100] = {};    // that collective, or the last one completed
  };
  struct Reply {
    Status status;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  void loop();
  Status snapshot();  // under mu_
  void serve();       // answers the peers that asked (watchdog thread, mu_ not held)
  [[noreturn]] void expire(const Status& mine, double timeout);
  std::string where() const;

  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stop_ = false;
  bool peers_on_ = false;  // the thread may use peers_ (cleared by stop_peers)
  double timeout_ = 300;
  Status status_;
  Clock::time_point started_;
  int rank_ = 0, size_ = 1;

  // Used by the watchdog thread only.
  MPI_Comm peers_ = MPI_COMM_NULL;
  std::int64_t query_ = 0;
  MPI_Request query_request_ = MPI_REQUEST_NULL;
  std::vector<Reply> replies_;  // one per peer that asked
};

}  // namespace linum::distributed::detail
