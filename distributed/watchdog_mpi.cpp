// The collective timeout's watchdog (see watchdog_mpi.hpp). Every 50 ms the thread answers the
// peers that asked where this process is, and checks the deadline of the collective running on
// the main thread. Past it, it asks every peer's watchdog (which answers even while its main
// thread hangs outside MPI), waits up to kAnswerWait for the answers, and prints which processes
// fail the job: no answer (dead, stopped, or cut off by the network), not in a collective (hung
// or skipped it), or in another collective (the processes are out of step).
#include "watchdog_mpi.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace linum::distributed::detail {
namespace {

constexpr int kQueryTag = 1, kReplyTag = 2;
constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr double kAnswerWait = 1.0;  // seconds a timed-out process waits for the peers' answers

// "psum over 'devices' (collective #7)": the count tells two calls of one collective apart.
std::string label(const char* what, std::int64_t seq) {
  return std::string(what) + " (collective #" + std::to_string(seq) + ")";
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace

void Watchdog::start(MPI_Comm peers, int rank, int size, double timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
    peers_on_ = peers != MPI_COMM_NULL;
    timeout_ = timeout;
    rank_ = rank;
    size_ = size;
    status_ = Status{};
  }
  peers_ = peers;
  replies_.assign(static_cast<std::size_t>(size), Reply{});
  thread_ = std::thread([this] { loop(); });
}

void Watchdog::stop_peers() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!peers_on_) return;
  peers_on_ = false;
  cv_.notify_all();
  // The thread lets go of peers_ on its next wake-up (at most kPoll) and says so.
  cv_.wait(lock, [&] { return peers_ == MPI_COMM_NULL || !thread_.joinable(); });
}

void Watchdog::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double Watchdog::timeout() {
  std::lock_guard<std::mutex> lock(mu_);
  return timeout_;
}

void Watchdog::set_timeout(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  timeout_ = seconds;
}

void Watchdog::enter(const char* what) {
  std::lock_guard<std::mutex> lock(mu_);
  ++status_.seq;
  status_.busy = 1;
  std::strncpy(status_.what, what, sizeof status_.what - 1);
  started_ = Clock::now();
}

void Watchdog::leave() {
  std::lock_guard<std::mutex> lock(mu_);
  status_.busy = 0;
}

Watchdog::Status Watchdog::snapshot() { return status_; }

std::string Watchdog::where() const {
  return "process " + std::to_string(rank_) + " of " + std::to_string(size_);
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kPoll);
    if (stop_) break;
    if (peers_ != MPI_COMM_NULL && !peers_on_) {
      // stop_peers: no receive may stay posted on a communicator about to be freed.
      if (query_request_ != MPI_REQUEST_NULL) {
        MPI_Cancel(&query_request_);
        MPI_Wait(&query_request_, MPI_STATUS_IGNORE);
      }
      for (Reply& r : replies_)
        if (r.request != MPI_REQUEST_NULL) MPI_Request_free(&r.request);
      peers_ = MPI_COMM_NULL;
      cv_.notify_all();
      continue;
    }
    if (peers_ != MPI_COMM_NULL) {
      lock.unlock();
      serve();
      lock.lock();
    }
    if (!status_.busy || timeout_ <= 0) continue;
    const double waited = std::chrono::duration<double>(Clock::now() - started_).count();
    if (waited < timeout_) continue;
    const Status mine = snapshot();
    const double timeout = timeout_;
    lock.unlock();
    expire(mine, timeout);
  }
  // stop() without stop_peers() (a program that returns without finalize): MPI may be gone.
  peers_ = MPI_COMM_NULL;
  cv_.notify_all();
}

void Watchdog::serve() {
  for (;;) {
    if (query_request_ == MPI_REQUEST_NULL &&
        MPI_Irecv(&query_, 1, MPI_INT64_T, MPI_ANY_SOURCE, kQueryTag, peers_, &query_request_) !=
            MPI_SUCCESS)
      return;
    int done = 0;
    MPI_Status st;
    if (MPI_Test(&query_request_, &done, &st) != MPI_SUCCESS || !done) break;
    Reply& r = replies_[static_cast<std::size_t>(st.MPI_SOURCE)];
    if (r.request != MPI_REQUEST_NULL) MPI_Test(&r.request, &done, MPI_STATUS_IGNORE);
    if (r.request == MPI_REQUEST_NULL) {  // else the previous answer is still on its way
      {
        std::lock_guard<std::mutex> lock(mu_);
        r.status = snapshot();
      }
      MPI_Isend(&r.status, sizeof(Status), MPI_BYTE, st.MPI_SOURCE, kReplyTag, peers_, &r.request);
    }
  }
  for (Reply& r : replies_) {
    int done = 0;
    if (r.request != MPI_REQUEST_NULL) MPI_Test(&r.request, &done, MPI_STATUS_IGNORE);
  }
}

void Watchdog::expire(const Status& mine, double timeout) {
  std::string report = "linum.distributed: " + label(mine.what, mine.seq) + " on " + where() +
                       " did not complete within " + seconds(timeout) + " (collective timeout)";
  if (peers_ == MPI_COMM_NULL) {
    report +=
        ": another process failed, hangs, or is not calling the same collective (MPI was "
        "initialised without MPI_THREAD_MULTIPLE, so the processes could not be asked which)\n";
  } else {
    // Ask every peer, keep answering the ones that ask us, and wait for the answers.
    std::vector<Status> got(static_cast<std::size_t>(size_));
    std::vector<MPI_Request> recv(got.size(), MPI_REQUEST_NULL), send(got.size(), MPI_REQUEST_NULL);
    std::int64_t ask = mine.seq;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      MPI_Irecv(&got[p], sizeof(Status), MPI_BYTE, p, kReplyTag, peers_, &recv[p]);
      MPI_Isend(&ask, 1, MPI_INT64_T, p, kQueryTag, peers_, &send[p]);
    }
    const auto deadline = Clock::now() + std::chrono::duration<double>(kAnswerWait);
    std::vector<bool> answered(got.size(), false);
    while (Clock::now() < deadline) {
      serve();
      bool all = true;
      for (int p = 0; p < size_; ++p) {
        if (p == rank_ || answered[p]) continue;
        int done = 0;
        if (MPI_Test(&recv[p], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done)
          answered[p] = true;
        else
          all = false;
      }
      if (all) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::string waiting;
    int failed = 0, same = 0;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      const std::string proc = "\nlinum.distributed: process " + std::to_string(p);
      const Status& s = got[p];
      if (answered[p] && s.busy && s.seq == mine.seq && std::strcmp(s.what, mine.what) == 0) {
        waiting += (same++ ? ", " : "") + std::to_string(p);
        continue;
      }
      if (answered[p] && s.busy && s.seq != mine.seq) {
        // Behind or ahead by a collective: it waits too (an earlier one it has not seen complete).
        report += proc + " waits in " + label(s.what, s.seq);
        continue;
      }
      ++failed;
      if (!answered[p])
        report += proc + " did not answer within " + seconds(kAnswerWait) +
                  ": it died, is stopped, or the network between it and this process is down";
      else if (!s.busy)
        report += proc + " is not in a collective (the last it entered: " + label(s.what, s.seq) +
                  "): it hangs outside MPI, or skipped this collective";
      else
        report += proc + " called another collective, " + label(s.what, s.seq) +
                  ": the processes are out of step";
    }
    if (same)
      report += "\nlinum.distributed: process" + std::string(same > 1 ? "es " : " ") + waiting +
                (same > 1 ? " wait" : " waits") + " in the same collective";
    if (failed == 0)
      report +=
          "\nlinum.distributed: every other process waits in a collective, which MPI did not "
          "complete (the network between some of them may be down)";
    report += "\n";
  }
  report += "linum.distributed: ending this process so that mpirun ends the job\n";
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace linum::distributed::detail
