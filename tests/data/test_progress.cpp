// The progress line on a fake clock: its text (steps, running loss, rates, ETA, elapsed time),
// when it prints on a terminal and in a log, and silence without an output.
#include <cstdio>
#include <cstdlib>

#include "data_testing.hpp"

namespace test_progress {

namespace data = linum::data;

namespace {

// A FILE* writing into memory, read back with text().
struct Capture {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  std::string text() {
    std::fflush(f);
    return std::string(buf, size);
  }
  ~Capture() {
    std::fclose(f);
    std::free(buf);
  }
};

}  // namespace

TEST_CASE("Progress: the line's steps, running loss, steps/s, examples/s, ETA and elapsed time") {
  double t = 100;
  data::Progress p(10,
                   {.desc = "epoch 1", .out = nullptr, .tty = false, .clock = [&] { return t; }});
  CHECK(p.line() == "epoch 1  0/10");
  // Losses 4, 2, 3 on batches of 32, 32, 16 examples over 2 seconds: the running loss is the
  // example-weighted mean (4*32 + 2*32 + 3*16) / 80 = 3.0; 1.5 steps/s, 40 examples/s; 7 steps
  // left at 1.5 steps/s is 4.67 s, which rounds to 0:05.
  p.update(4, 32);
  t += 1;
  p.update(2, 32);
  t += 1;
  p.update(3, 16);
  CHECK(p.steps() == 3);
  CHECK(p.mean_loss() == 3.0);
  CHECK(p.line() == "epoch 1  3/10  loss 3.0000  1.5 steps/s  40 examples/s  ETA 0:05");
  t += 10;
  p.close();
  t += 100;  // after close the elapsed time stays
  CHECK(p.elapsed() == 12);
  CHECK(p.line() == "epoch 1  3/10  loss 3.0000  0.2 steps/s  7 examples/s  12.0 s");
  p.update(100);  // ignored once closed
  CHECK(p.steps() == 3);

  // Without example counts every step weighs the same; without a total there is no ETA; long
  // runs print hours.
  double u = 0;
  data::Progress q(0, {.out = nullptr, .tty = false, .clock = [&] { return u; }});
  u = 4;
  q.update(1);
  q.update(2);
  CHECK(q.line() == "2  loss 1.5000  0.5 steps/s");
  data::Progress r(10000, {.out = nullptr, .tty = false, .clock = [&] { return u; }});
  u += 1;
  r.update(0.5);
  CHECK(r.line() == "1/10000  loss 0.5000  1.0 steps/s  ETA 2:46:39");
}

TEST_CASE(
    "Progress: in a log, a line every interval and a final one; on a terminal, '\\r' redraws") {
  double t = 0;
  Capture log;
  {
    data::Progress p(6, {.desc = "train", .out = log.f, .tty = false, .interval = 5, .clock = [&] {
                           return t;
                         }});
    for (int i = 0; i < 6; ++i) {
      t += 2;  // a line at t = 6 (5 s since the start have passed); the last step's is close()'s
      p.update(1.0);
    }
    CHECK(log.text() == "train  3/6  loss 1.0000  0.5 steps/s  ETA 0:06\n");
    // The destructor closes.
  }
  CHECK(log.text() ==
        "train  3/6  loss 1.0000  0.5 steps/s  ETA 0:06\n"
        "train  6/6  loss 1.0000  0.5 steps/s  12.0 s\n");

  Capture term;
  t = 0;
  data::Progress p(4, {.out = term.f, .tty = true, .clock = [&] { return t; }});
  t = 1;
  p.update(10.0);
  t = 101;
  p.update(0.0);  // shorter ETA text: spaces cover the longer line before it
  p.close();
  CHECK(term.text() ==
        "\r[=====               ] 1/4  loss 10.0000  1.0 steps/s  ETA 0:03"
        "\r[==========          ] 2/4  loss 5.0000  0.0 steps/s  ETA 1:41 "
        "\r[==========          ] 2/4  loss 5.0000  0.0 steps/s  101.0 s \n");
}

TEST_CASE("Progress: smoothing gives an exponential moving average; set_postfix adds text") {
  double t = 0;
  data::Progress p(0, {.out = nullptr, .tty = false, .smoothing = 0.5, .clock = [&] { return t; }});
  // 4, then 0.5 * 4 + 0.5 * 2 = 3, then 0.5 * 3 + 0.5 * 0 = 1.5 (the mean would be 2).
  p.update(4);
  p.update(2);
  p.update(0);
  CHECK(p.mean_loss() == 1.5);
  t = 3;
  p.set_postfix("lr 1.00e-03");
  CHECK(p.line() == "3  loss 1.5000  1.0 steps/s  lr 1.00e-03");
  data_test::check_error<linum::ValueError>(
      [] { data::Progress(1, {.out = nullptr, .smoothing = 1.0}); },
      {"Progress: smoothing must be in [0, 1), got 1"});
}

}  // namespace test_progress
