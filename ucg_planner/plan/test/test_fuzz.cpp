// SPDX-License-Identifier: BSD-3-Clause
// A seeded mutator drives the plan parser and every checker over corrupted
// copies of the golden plans (run under ASan+UBSan by the CI): whatever the
// text, parse() either names a line or gives a plan the checkers finish on
// without a crash, an overflow, a hang or an allocation that does not fit.
// UCG_FUZZ_ROUNDS sets the number of mutants (default 3000); a failure
// prints the mutant's round, so UCG_FUZZ_FIRST=round replays it first.
#include "plan/plan.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ucg::plan;

namespace {

int env_int(const char *name, int fallback)
{
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

std::vector<std::string> golden_plans()
{
    std::vector<std::string> out;
    for (const auto &e :
         std::filesystem::directory_iterator(UCG_PLAN_GOLDEN_DIR)) {
        if (e.path().extension() == ".plan") {
            std::ifstream in(e.path());
            std::ostringstream s;
            s << in.rdbuf();
            out.push_back(s.str());
        }
    }
    return out;
}

std::vector<std::string> lines_of(const std::string &text)
{
    std::vector<std::string> v;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
        v.push_back(line);
    }
    return v;
}

std::string join(const std::vector<std::string> &v)
{
    std::string s;
    for (const auto &l : v) {
        s += l;
        s += '\n';
    }
    return s;
}

// Values that break naive arithmetic and allocation.
const char *const kNasty[] = {
    "0",          "-1",          "1",          "2",           "3",
    "7",          "65536",       "2147483647", "-2147483648", "2000000000",
    "2147483648", "99999999999", "1048576",    "1073741824",  "-0"};

class Mutator {
  public:
    explicit Mutator(std::uint64_t seed) : rng_(seed) {}

    std::string mutate(const std::string &text,
                       const std::vector<std::string> &corpus)
    {
        std::vector<std::string> l = lines_of(text);
        const int n = 1 + pick(3);
        for (int k = 0; k < n && !l.empty(); ++k) {
            std::string &line = l[pick(l.size())];
            switch (pick(8)) {
            case 0:
            case 1:
            case 2:
                replace_number(line);
                break;
            case 3:
                l.erase(l.begin() + static_cast<long>(pick(l.size())));
                break;
            case 4:
                l.insert(l.begin() + static_cast<long>(pick(l.size())), line);
                break;
            case 5: {
                const auto other = lines_of(corpus[pick(corpus.size())]);
                l.insert(l.begin() + static_cast<long>(pick(l.size())),
                         other[pick(other.size())]);
                break;
            }
            case 6:
                if (!line.empty()) {
                    static const char kChars[] = "0123456789-+:,= abz\t";
                    line[pick(line.size())] = kChars[pick(sizeof(kChars) - 1)];
                }
                break;
            default:
                line.resize(pick(line.size() + 1));
                break;
            }
        }
        return join(l);
    }

  private:
    std::size_t pick(std::size_t n)
    {
        return n == 0
                   ? 0
                   : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
    }

    // One run of digits (with its sign) becomes a nasty value.
    void replace_number(std::string &line)
    {
        std::vector<std::size_t> starts;
        for (std::size_t i = 0; i < line.size(); ++i) {
            const bool digit = line[i] >= '0' && line[i] <= '9';
            if (digit && (i == 0 || line[i - 1] < '0' || line[i - 1] > '9')) {
                starts.push_back(i > 0 && line[i - 1] == '-' ? i - 1 : i);
            }
        }
        if (starts.empty()) {
            return;
        }
        const std::size_t at = starts[pick(starts.size())];
        std::size_t end = at + (line[at] == '-' ? 1 : 0);
        while (end < line.size() && line[end] >= '0' && line[end] <= '9') {
            ++end;
        }
        line.replace(at, end - at, kNasty[pick(std::size(kNasty))]);
    }

    std::mt19937_64 rng_;
};

// Every checker a user-supplied plan meets; none may crash or hang.
void exercise(const Plan &plan)
{
    const auto errors = validate(plan);
    if (!errors.empty()) {
        return;
    }
    (void)check_symbolic(plan);
    (void)check_symbolic(plan, Combine::kOrdered);
    (void)check_synchronous(plan);
    for (int r = 0; r < plan.nranks && r < 4; ++r) {
        const Plan one = project(plan, r);
        (void)print(one);
        (void)early_receives(one.ranks[static_cast<std::size_t>(r)]);
    }
}

} // namespace

TEST_CASE("corrupted plans are refused or checked, never crash the checkers",
          "[plan][fuzz]")
{
    const auto corpus = golden_plans();
    REQUIRE(corpus.size() >= 5);
    const int rounds = env_int("UCG_FUZZ_ROUNDS", 3000);
    const int first = env_int("UCG_FUZZ_FIRST", 0);
    int parsed = 0, refused = 0;
    for (int k = 0; k < rounds; ++k) {
        const int round = (first + k) % std::max(rounds, 1);
        Mutator m(0x5eed0000u + static_cast<std::uint64_t>(round));
        const std::string &base =
            corpus[static_cast<std::size_t>(round) % corpus.size()];
        const std::string text = m.mutate(base, corpus);
        INFO("round " << round << ", mutant:\n" << text);
        auto plan = parse(text);
        if (!plan) {
            ++refused;
            // Every refusal names the line it stopped at.
            CHECK(plan.error().message.rfind("line ", 0) == 0);
            continue;
        }
        ++parsed;
        exercise(*plan);
    }
    // The mutator reaches both sides of the parser.
    CHECK(parsed > rounds / 20);
    CHECK(refused > rounds / 20);
}

TEST_CASE("counts past the text and the memory are refused before allocating",
          "[plan][fuzz]")
{
    const std::string head = "ucg-plan 1\ncollective bcast\nalgorithm x\n";
    // More ops (or ranks) than lines follow: refused, nothing allocated.
    auto p = parse(head + "ranks 1 root 0 chunks 1\n"
                          "rank 0 scratch 0 ops 2000000000\nend\n");
    REQUIRE_FALSE(p);
    CHECK(p.error().message.find("line 5") == 0);
    p = parse(head + "ranks 1000000 root 0 chunks 1\nend\n");
    REQUIRE_FALSE(p);
    // A plan whose slots would not fit in memory: validate refuses it by
    // name instead of allocating them (or looping over them).
    p = parse(head + "ranks 2 root 0 chunks 2000000000\n"
                     "rank 0 scratch 2147483647 ops 1\n"
                     "0 send p2p peers=1 tag=0 src=out:0+1:0+1 dst=- deps=-\n"
                     "rank 1 scratch 0 ops 1\n"
                     "0 recv p2p peers=0 tag=0 src=- dst=out:0+1:0+1 "
                     "deps=-\nend\n");
    REQUIRE(p);
    auto errors = validate(*p);
    REQUIRE_FALSE(errors.empty());
    CHECK(errors[0].find("too large") != std::string::npos);
    // A range whose end overflows int is out of bounds, not a hang.
    p = parse(head + "ranks 2 root 0 chunks 3\n"
                     "rank 0 scratch 2 ops 1\n"
                     "0 send p2p peers=1 tag=0 src=scr:2147483647+3:0+3 "
                     "dst=- deps=-\n"
                     "rank 1 scratch 0 ops 1\n"
                     "0 recv p2p peers=0 tag=0 src=- dst=out:0+1:0+3 "
                     "deps=-\nend\n");
    REQUIRE(p);
    errors = validate(*p);
    REQUIRE_FALSE(errors.empty());
    CHECK(errors[0].find("out of bounds") != std::string::npos);
}
