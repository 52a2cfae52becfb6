// SPDX-License-Identifier: BSD-3-Clause
// Parser for selection rules (grammar in tune.h).
#include "select/tune.h"

#include "algorithms/registry.h"
#include "select/decide.h"
#include "select/selector.h"

#include <charconv>
#include <cstdlib>

namespace ucg::select {

namespace {

/// Walks one rule string, remembering columns for errors.
class Cursor {
  public:
    Cursor(std::string_view all, size_t begin, size_t end, std::string origin,
           int index)
        : all_(all), pos_(begin), end_(end), origin_(std::move(origin)),
          index_(index)
    {
    }
    /// Characters up to the first of `stops` (or the end of the rule).
    std::string_view token(std::string_view stops)
    {
        size_t start = pos_;
        while (pos_ < end_ &&
               stops.find(all_[pos_]) == std::string_view::npos) {
            ++pos_;
        }
        return all_.substr(start, pos_ - start);
    }
    bool eat(char c)
    {
        if (pos_ < end_ && all_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    bool done() const { return pos_ >= end_; }
    size_t pos() const { return pos_; }
    Error error(size_t at, const std::string &what) const
    {
        std::string rule(all_.substr(begin_of_rule(), end_ - begin_of_rule()));
        return fail(origin_ + ": rule " + std::to_string(index_) + " ('" +
                    rule + "'), column " + std::to_string(at + 1) + ": " +
                    what);
    }
    void set_rule_begin(size_t b) { rule_begin_ = b; }

  private:
    size_t begin_of_rule() const { return rule_begin_; }
    std::string_view all_;
    size_t pos_, end_;
    std::string origin_;
    int index_;
    size_t rule_begin_ = 0;
};

Result<int> parse_int(std::string_view s)
{
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 0) {
        return fail("expected a non-negative integer, got '" + std::string(s) +
                    "'");
    }
    return v;
}

Result<void> parse_param(Rule &rule, Cursor &cur)
{
    size_t at = cur.pos();
    std::string_view key = cur.token("=,;");
    if (!cur.eat('=')) {
        return cur.error(at, "expected param=value (radix, seg, segments or "
                             "ranks), got '" +
                                 std::string(key) + "'");
    }
    size_t vat = cur.pos();
    std::string_view val = cur.token(",;");
    if (key == "seg") {
        auto s = parse_size(val);
        if (!s || *s == 0 || *s == kInfinity) {
            return cur.error(vat, "expected a segment size such as 8k, got '" +
                                      std::string(val) + "'");
        }
        rule.segment_bytes = *s;
        return {};
    }
    if (key == "ranks") {
        size_t dash = val.find('-');
        auto lo = parse_int(val.substr(0, dash));
        auto hi = dash == std::string_view::npos
                      ? lo
                      : (val.substr(dash + 1) == "inf"
                             ? Result<int>(INT32_MAX)
                             : parse_int(val.substr(dash + 1)));
        if (!lo || !hi || *hi < *lo) {
            return cur.error(vat, "expected ranks=LO-HI, got '" +
                                      std::string(val) + "'");
        }
        rule.min_ranks = *lo;
        rule.max_ranks = *hi;
        return {};
    }
    int *field = key == "radix"      ? &rule.radix
                 : key == "segments" ? &rule.segments
                                     : nullptr;
    if (field == nullptr) {
        return cur.error(at, "unknown parameter '" + std::string(key) +
                                 "' (expected radix, seg, segments or ranks)");
    }
    auto v = parse_int(val);
    if (!v || *v < 1 || (field == &rule.radix && *v < 2)) {
        return cur.error(
            vat, std::string("expected ") +
                     (field == &rule.radix ? "a radix >= 2" : "a count >= 1") +
                     ", got '" + std::string(val) + "'");
    }
    *field = *v;
    return {};
}

bool has_hierarchical(plan::Collective c)
{
    return algorithms::find_algorithm(c, "hierarchical") != nullptr ||
           c == plan::Collective::kGather || c == plan::Collective::kScatter;
}

/// A level rule's shape: one of shape_name()'s, or auto.
Result<void> check_level_rule(const Rule &rule)
{
    using algorithms::Shape;
    const std::string &a = rule.algorithm;
    if (rule.collective && !has_hierarchical(*rule.collective)) {
        return fail(std::string(plan::to_string(*rule.collective)) +
                    " has no hierarchical algorithm, so no level rule "
                    "applies to it");
    }
    const bool allreduce = rule.collective == plan::Collective::kAllreduce;
    // An allreduce's top leaders may exchange instead (decide.cpp).
    bool shape = a == "auto" || (allreduce && detail::is_top_exchange(a));
    for (Shape s : {Shape::kLinear, Shape::kKnomial, Shape::kChain,
                    Shape::kBinary, Shape::kShm, Shape::kMcast}) {
        shape = shape || a == shape_name(s);
    }
    if (!shape) {
        return fail("unknown level shape '" + a +
                    "' (expected linear, knomial, chain, binary_tree, shm, "
                    "mcast or auto" +
                    (allreduce ? ", or at an allreduce's top level "
                                 "recursive_doubling or rabenseifner)"
                               : ")"));
    }
    const bool gs = rule.collective == plan::Collective::kGather ||
                    rule.collective == plan::Collective::kScatter;
    if (gs && a != "auto" && a != "knomial" && a != "linear" &&
        (a != "shm" || rule.collective == plan::Collective::kScatter)) {
        return fail(
            "shape '" + a + "' does not apply to a " +
            std::string(plan::to_string(*rule.collective)) +
            " level (expected knomial, linear" +
            (rule.collective == plan::Collective::kGather ? ", shm" : "") +
            " or auto)");
    }
    if (rule.radix > 2 && a != "knomial") {
        return fail("radix=" + std::to_string(rule.radix) +
                    ": the level shape '" + a + "' takes no radix");
    }
    return {};
}

/// Refuses a rule that can never apply: an algorithm its collective does
/// not have, a level shape that does not exist, a radix nothing reads.
/// radix=2 is accepted everywhere: it is what a decision reports for an
/// algorithm without a radix, so a printed decision parses back.
Result<void> check_applies(const Rule &rule)
{
    if (rule.level) {
        return check_level_rule(rule);
    }
    const std::string &a = rule.algorithm;
    if (a == "auto") {
        if (rule.radix > 2) {
            return fail("radix=" + std::to_string(rule.radix) +
                        " with auto: the cost model picks the radix");
        }
        return {};
    }
    // Pipelines: the algorithms whose cost counts segments, and those the
    // hierarchical path prices (null cost: hierarchical, shm, mcast).
    bool exists = false, radix = false, pipelines = false;
    for (const algorithms::Algorithm &alg : algorithms::registry()) {
        if ((!rule.collective || alg.collective == *rule.collective) &&
            alg.name == a) {
            exists = true;
            radix = radix || alg.takes_radix;
            pipelines = pipelines || alg.segments || !alg.cost;
        }
    }
    if (a == "hierarchical" && rule.collective &&
        has_hierarchical(*rule.collective)) {
        exists = true;
        radix = true;
        pipelines = true;
    }
    if (!exists) {
        return fail("no algorithm '" + a + "' for " +
                    (rule.collective
                         ? std::string(plan::to_string(*rule.collective))
                         : std::string("any collective")));
    }
    if (rule.radix > 2 && !radix) {
        return fail("radix=" + std::to_string(rule.radix) + ": '" + a +
                    "' takes no radix");
    }
    // segments=1 is what a decision reports for every algorithm.
    if ((rule.segments > 1 || rule.segment_bytes > 0) && !pipelines) {
        return fail((rule.segments > 1
                         ? "segments=" + std::to_string(rule.segments)
                         : "seg=" + std::to_string(rule.segment_bytes)) +
                    ": '" + a + "' does not pipeline");
    }
    return {};
}

Result<Rule> parse_rule(Cursor &cur, size_t begin)
{
    Rule rule;
    std::string_view coll = cur.token("@:");
    if (coll != "*") {
        auto c = plan::collective_from_string(coll);
        if (!c) {
            return cur.error(begin, "expected a collective (bcast, allreduce, "
                                    "...) or '*', got '" +
                                        std::string(coll) + "'");
        }
        rule.collective = *c;
    }
    if (cur.eat('@')) {
        size_t at = cur.pos();
        auto lvl = topology::parse_level(cur.token(":"));
        if (!lvl) {
            return cur.error(at, lvl.error().message);
        }
        rule.level = *lvl;
    }
    if (!cur.eat(':')) {
        return cur.error(cur.pos(), "expected ':' and a size range");
    }
    size_t at = cur.pos();
    auto lo = parse_size(cur.token("-:"));
    if (!lo) {
        return cur.error(at, lo.error().message);
    }
    if (!cur.eat('-')) {
        return cur.error(cur.pos(), "expected '-' in the size range LO-HI");
    }
    size_t hat = cur.pos();
    auto hi = parse_size(cur.token(":"));
    if (!hi) {
        return cur.error(hat, hi.error().message);
    }
    if (*hi <= *lo) {
        return cur.error(hat, "empty size range (the upper bound is "
                              "exclusive)");
    }
    rule.min_bytes = *lo;
    rule.max_bytes = *hi;
    if (!cur.eat(':')) {
        return cur.error(cur.pos(), "expected ':' and an algorithm");
    }
    size_t aat = cur.pos();
    rule.algorithm = std::string(cur.token(":"));
    if (rule.algorithm.empty()) {
        return cur.error(aat, "expected an algorithm name or auto");
    }
    if (cur.eat(':')) {
        do {
            if (auto p = parse_param(rule, cur); !p) {
                return p.error();
            }
        } while (cur.eat(','));
    }
    if (!cur.done()) {
        return cur.error(cur.pos(), "unexpected text after the rule");
    }
    if (auto ok = check_applies(rule); !ok) {
        return cur.error(aat, ok.error().message);
    }
    return rule;
}

/// Whether `a` matches every request `b` matches (b can never fire
/// after it).
bool covers(const Rule &a, const Rule &b)
{
    return (!a.collective || a.collective == b.collective) &&
           a.level == b.level && a.min_bytes <= b.min_bytes &&
           a.max_bytes >= b.max_bytes && a.min_ranks <= b.min_ranks &&
           a.max_ranks >= b.max_ranks;
}

} // namespace

bool Rule::matches(plan::Collective c, std::optional<topology::LevelKind> lvl,
                   uint64_t bytes, int nranks) const
{
    return (!collective || *collective == c) && level == lvl &&
           bytes >= min_bytes && bytes < max_bytes && nranks >= min_ranks &&
           nranks <= max_ranks;
}

const Rule *RuleSet::find(plan::Collective c,
                          std::optional<topology::LevelKind> l, uint64_t bytes,
                          int nranks) const
{
    for (const Rule &r : rules) {
        if (r.matches(c, l, bytes, nranks)) {
            return &r;
        }
    }
    return nullptr;
}

Result<uint64_t> parse_size(std::string_view text)
{
    if (text == "inf") {
        return kInfinity;
    }
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    std::string_view unit(p, size_t(text.data() + text.size() - p));
    int shift = unit.empty()                 ? 0
                : unit == "k" || unit == "K" ? 10
                : unit == "m" || unit == "M" ? 20
                : unit == "g" || unit == "G" ? 30
                                             : -1;
    if (ec != std::errc() || text.empty() || shift < 0 ||
        v > (kInfinity >> shift) >> 1) {
        return fail("expected a size (e.g. 4096, 64k, 1m) or inf, got '" +
                    std::string(text) + "'");
    }
    return v << shift;
}

std::string format_size(uint64_t bytes)
{
    if (bytes == kInfinity) {
        return "inf";
    }
    const char *units[] = {"", "k", "m", "g"};
    int u = 0;
    while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++u;
    }
    return std::to_string(bytes) + units[u];
}

Result<RuleSet> parse_rules(std::string_view text, std::string origin)
{
    RuleSet set;
    set.origin = origin;
    size_t pos = 0;
    int index = 1;
    while (pos < text.size()) {
        size_t end = text.find(';', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        // Whitespace around a rule is allowed (multi-line rule strings).
        size_t b = pos, e = end;
        while (b < e &&
               (text[b] == ' ' || text[b] == '\n' || text[b] == '\t')) {
            ++b;
        }
        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\n' ||
                         text[e - 1] == '\t')) {
            --e;
        }
        if (b < e) {
            Cursor cur(text, b, e, origin, index);
            cur.set_rule_begin(b);
            auto rule = parse_rule(cur, b);
            if (!rule) {
                return rule.error();
            }
            rule->text = std::string(text.substr(b, e - b));
            for (size_t i = 0; i < set.rules.size(); ++i) {
                if (covers(set.rules[i], *rule)) {
                    set.warnings.push_back(
                        origin + ": rule " + std::to_string(index) + " ('" +
                        rule->text + "') never applies: rule " +
                        std::to_string(i + 1) + " ('" + set.rules[i].text +
                        "') matches everything it does");
                    break;
                }
            }
            set.rules.push_back(std::move(rule).value());
            ++index;
        }
        pos = end + 1;
    }
    return set;
}

const char *builtin_rules_text()
{
    // No built-in picks: the cost model prices every collective, the
    // hierarchical exchanges with all P blocks (select/decide.cpp). The
    // old pins (reduce_scatter always ring, allgather ring above 64k,
    // alltoall bruck/pairwise) lost up to 12x to the best simulated plan;
    // without them no sweep case (test_accuracy.cpp) needs a rule.
    return "*:0-inf:auto";
}

const RuleSet &builtin_rules()
{
    static const RuleSet set = [] {
        auto r = parse_rules(builtin_rules_text(), "built-in");
        return r ? std::move(r).value() : RuleSet{};
    }();
    return set;
}

Result<RuleSet> rules_from_env()
{
    const char *v = std::getenv("UCG_TUNE");
    if (v == nullptr) {
        return RuleSet{{}, "UCG_TUNE", {}};
    }
    return parse_rules(v, "UCG_TUNE");
}

} // namespace ucg::select
