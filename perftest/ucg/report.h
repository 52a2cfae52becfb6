// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest's output: the OSU-style table per collective, a CSV file
// and a gnuplot figure of latency against size (ours beside the baseline).
#pragma once

#include "bench.h"
#include "floor.h"

#include <cstdio>
#include <string>
#include <vector>

namespace ucg::perftest {

struct Row {
    ucg_coll_type_t coll;
    std::size_t bytes;
    Stats ucg, mpi;
};

class Report {
  public:
    Report(const Options &opt, const Env &env, double group_create_us,
           const Floor &floor);
    ~Report();
    /// The header of one collective's table.
    void begin(ucg_coll_type_t coll);
    void row(const Row &r);
    /// Writes the CSV and the figure; false (with a message) on failure.
    bool finish();

  private:
    const Options &opt_;
    const Env &env_;
    std::vector<Row> rows_;
    std::FILE *csv_ = nullptr;
};

} // namespace ucg::perftest
