// SPDX-License-Identifier: BSD-3-Clause
// Selection rules as data. The built-in rules and the user's (UCG_TUNE)
// share one grammar and one parser:
//
//   rules  := rule (';' rule)* [';']
//   rule   := coll ['@' level] ':' size '-' size ':' alg
//             [':' param (',' param)*]
//   coll   := bcast | reduce | allreduce | gather | scatter | allgather
//           | alltoall | reduce_scatter | barrier | scan | exscan | '*'
//   level  := numa | socket | host | switch | rack | world
//   size   := N [k|m|g] | inf          (bytes; from inclusive, to exclusive)
//   alg    := a registry name, a level shape, or auto (the cost model)
//   param  := radix=N | seg=SIZE | segments=N | ranks=N-N
//
// e.g. "bcast:0-8k:knomial:radix=4;allreduce:64k-inf:ring". A rule without
// a level picks the whole collective; with one, the shape of that level in
// the hierarchical plan. The first matching rule wins; user rules come
// before the built-in ones.
#pragma once

#include "plan/plan.h"
#include "topology/topology.h"
#include "ucg/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ucg::select {

constexpr uint64_t kInfinity = UINT64_MAX;

struct Rule {
    std::optional<plan::Collective> collective; ///< empty: any ('*')
    std::optional<topology::LevelKind> level;   ///< empty: whole collective
    uint64_t min_bytes = 0;                     ///< inclusive
    uint64_t max_bytes = kInfinity;             ///< exclusive
    std::string algorithm;                      ///< "auto": cost model
    int radix = 0;                              ///< 0: choose
    uint64_t segment_bytes = 0;                 ///< 0: choose
    int segments = 0;                           ///< 0: choose
    int min_ranks = 0;                          ///< group size, inclusive
    int max_ranks = INT32_MAX;                  ///< inclusive
    std::string text;                           ///< as written

    bool matches(plan::Collective c, std::optional<topology::LevelKind> lvl,
                 uint64_t bytes, int nranks) const;
};

struct RuleSet {
    std::vector<Rule> rules;
    std::string origin; ///< "UCG_TUNE", "built-in", ...
    /// One line per rule that an earlier rule shadows entirely (it can
    /// never fire); the caller logs them. Not an error: a broad rule put
    /// first while trying things out is common.
    std::vector<std::string> warnings;

    /// First rule matching, or nullptr.
    const Rule *find(plan::Collective c, std::optional<topology::LevelKind> l,
                     uint64_t bytes, int nranks) const;
};

/// Errors name the origin, the rule, the column (1-based, in `text`) and
/// what was expected there. A rule that can never apply is refused: an
/// empty size or rank range, an algorithm its collective lacks, a level
/// shape that does not exist or does not fit the collective, a level rule
/// for a collective without a hierarchical algorithm, a radix above 2 for
/// an algorithm or shape that takes none. Levels the machine lacks are
/// refused by the Selector, which knows the topology.
Result<RuleSet> parse_rules(std::string_view text, std::string origin);

/// "64k" -> 65536; "inf" -> kInfinity.
Result<uint64_t> parse_size(std::string_view text);
/// 65536 -> "64k".
std::string format_size(uint64_t bytes);

/// The built-in rules, in the same grammar.
const char *builtin_rules_text();
const RuleSet &builtin_rules();

/// The rules in UCG_TUNE (empty set when unset).
Result<RuleSet> rules_from_env();

} // namespace ucg::select
