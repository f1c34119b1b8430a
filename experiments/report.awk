# Our numbers beside the paper's: joins results.csv with paper.csv on
# (series, x, metric) and writes a markdown table, then one line per gap over
# 25% with its explanation from gaps.csv, or "unexplained". Nothing is left
# out: a paper number we did not measure is listed as such.
#
# usage: awk -f report.awk -v paper=paper.csv -v results=results.csv [-v gaps=gaps.csv]
#
#   paper.csv   figure,section,series,x,metric,value,unit,source
#   results.csv series,x,metric,value,unit,engine[,profile]
#   gaps.csv    series,x,metric,explanation[,profile] ("*" in series, x,
#               metric or profile matches anything; the first exact row wins
#               over wildcards, else the first row that matches: put a
#               profile's own rows above the rows for every profile; no
#               profile column is "*")
#
# profile is the system cost profile a number was measured with (sluice
# --profile): "ideal" (none; also when the column is absent), "sluice" (our
# executor's own costs) or the paper's system's (raydata, spark, flink).
# Each profile's comparisons are counted apart.
#
# Values are numbers, or a word such as OOM. Both OOM is agreement; one OOM
# against a number is a gap without a ratio. Plain POSIX awk (Debian ships
# mawk): no gawk extensions.

function csvsplit(line, f,    n, i, c, q, cur, len) {
  sub(/\r$/, "", line)
  n = 0; cur = ""; q = 0; len = length(line)
  for (i = 1; i <= len; i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ } else q = 0
      } else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}

function fail(msg) {
  print "report.awk: " msg > "/dev/stderr"
  failed = 1
  exit 2
}

# Reads FILE into rows TAB[r, column name]; returns the row count. Every name
# in the space-separated NEED must be a column of the header.
function load(file, tab, need,    line, f, h, n, i, j, r, want, k, ok, found) {
  ok = (getline line < file)
  if (ok <= 0) fail(file ": cannot read it, or it is empty")
  n = csvsplit(line, f)
  for (i = 1; i <= n; i++) h[i] = f[i]
  k = split(need, want, " ")
  for (i = 1; i <= k; i++) {
    found = 0
    for (j = 1; j <= n; j++) if (h[j] == want[i]) found = 1
    if (!found) fail(file ": no column '" want[i] "' in its header")
  }
  r = 0
  while ((getline line < file) > 0) {
    if (line ~ /^[ \t\r]*$/) continue
    r++
    csvsplit(line, f)
    for (i = 1; i <= n; i++) tab[r, h[i]] = f[i]
  }
  close(file)
  return r
}

function isnum(v) {
  return v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/
}

function fmt(v,    a) {
  if (!isnum(v)) return v
  v += 0 # a string from the file compares as a string otherwise
  a = v < 0 ? -v : v
  if (a == 0) return "0"
  if (a >= 1000) return sprintf("%.0f", v)
  if (a >= 10) { v = sprintf("%.1f", v); sub(/\.0$/, "", v); return v }
  return sprintf("%.3g", v)
}

# A table cell: a '|' would end it early.
function md(v) {
  gsub(/\|/, "\\|", v)
  return v
}

function key(s, x, m) { return s SUBSEP x SUBSEP m }

function gap_profile(i) { return G[i, "profile"] == "" ? "*" : G[i, "profile"] }

function explain(s, x, m, prof,    i) {
  for (i = 1; i <= ngaps; i++)
    if (G[i, "series"] == s && G[i, "x"] == x && G[i, "metric"] == m && gap_profile(i) == prof)
      return G[i, "explanation"]
  for (i = 1; i <= ngaps; i++)
    if ((G[i, "series"] == s || G[i, "series"] == "*") && (G[i, "x"] == x || G[i, "x"] == "*") &&
        (G[i, "metric"] == m || G[i, "metric"] == "*") && (gap_profile(i) == prof || gap_profile(i) == "*"))
      return G[i, "explanation"]
  return ""
}

function profile_of(i) { return R[i, "profile"] == "" ? "ideal" : R[i, "profile"] }

# The report's last lines: one per kind of profile.
function tally(kind, what,    n) {
  if (!(kind in n_compared)) return
  printf "%s: %d compared with the paper's, %d within 25%%, %d gaps over 25%% (%d unexplained).\n", what,
         n_compared[kind], n_compared[kind] - n_gaps[kind], n_gaps[kind], n_unexplained[kind] + 0
}

function kind_of(prof) { return prof == "ideal" || prof == "sluice" ? prof : "system" }

# One comparison: sets CMP_RATIO (text) and returns 1 when it is a gap.
function compare(ours, theirs,    r) {
  if (isnum(ours) && isnum(theirs)) {
    if (theirs + 0 == 0) { CMP_RATIO = ours + 0 == 0 ? "both 0" : "—"; return ours + 0 != 0 }
    r = ours / theirs
    CMP_RATIO = sprintf("%.2f", r)
    return r > 1.25 + 1e-9 || r < 0.75 - 1e-9
  }
  if (ours == theirs) { CMP_RATIO = "both " ours; return 0 }
  CMP_RATIO = "—"
  return 1
}

BEGIN {
  if (paper == "" || results == "") fail("usage: awk -f report.awk -v paper=FILE -v results=FILE [-v gaps=FILE]")
  np = load(paper, P, "figure section series x metric value unit source")
  nr = load(results, R, "series x metric value unit engine")
  ngaps = gaps == "" ? 0 : load(gaps, G, "series x metric explanation")
  for (i = 1; i <= np; i++) paper_row[key(P[i, "series"], P[i, "x"], P[i, "metric"])] = i

  print "| series | x | metric | ours | paper | ours / paper | unit | engine | profile | paper source |"
  print "|---|---|---|---:|---:|---:|---|---|---|---|"
  ng = 0
  for (i = 1; i <= nr; i++) {
    s = R[i, "series"]; x = R[i, "x"]; m = R[i, "metric"]; v = R[i, "value"]; prof = profile_of(i)
    k = key(s, x, m)
    if (k in paper_row) {
      p = paper_row[k]; used[p] = 1
      gap = compare(v, P[p, "value"])
      theirs = fmt(P[p, "value"]); ratio = CMP_RATIO
      src = P[p, "figure"] ", " P[p, "section"] ", " P[p, "source"]
      n_compared[kind_of(prof)]++
      compared[i] = 1; is_gap[i] = gap
      if (gap) {
        ng++
        n_gaps[kind_of(prof)]++
        if (prof == "ideal") ng_ideal++
        why = explain(s, x, m, prof)
        gapline[ng] = sprintf("- **%s, %s, %s** (%s%s): ours %s, paper %s%s — %s", s, x, m, R[i, "engine"],
                              prof == "ideal" ? "" : ", profile " prof, fmt(v), theirs,
                              ratio == "—" ? "" : " (" ratio "×)", why == "" ? "**unexplained**" : why)
        if (why == "") { n_unexplained[kind_of(prof)]++; if (prof == "ideal") unexplained++; no_why[i] = 1 }
        ratio = ratio " ⚠"
      }
    } else {
      theirs = "—"; ratio = "—"; src = "(no paper number)"
    }
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", md(s), md(x), md(m), md(fmt(v)), md(theirs),
           ratio, md(R[i, "unit"]), md(R[i, "engine"]), md(prof), md(src)
  }
  nmiss = 0
  for (p = 1; p <= np; p++) {
    if (p in used) continue
    nmiss++
    printf "| %s | %s | %s | not measured | %s | — | %s | — | — | %s |\n", md(P[p, "series"]), md(P[p, "x"]),
           md(P[p, "metric"]), md(fmt(P[p, "value"])), md(P[p, "unit"]),
           md(P[p, "figure"] ", " P[p, "section"] ", " P[p, "source"])
  }
  print ""
  print "## Gaps over 25%"
  print ""
  if (ng == 0) print "None: every number we measured is within 25% of the paper's."
  for (i = 1; i <= ng; i++) print gapline[i]
  print ""
  printf "%d of our %d numbers compared with the paper's, %d gaps over 25%% (%d unexplained), %d paper numbers not measured.\n", \
         ncompared(), nideal(), ng_ideal + 0, unexplained + 0, nmiss
  if ("system" in n_compared || "sluice" in n_compared) {
    print ""
    tally("ideal", "Ideal (no system cost)")
    tally("sluice", "sluice's executor (profile sluice)")
    tally("system", "The paper's systems (profiles raydata, spark, flink)")
    as_the_paper_ran()
  }
}

# Every comparison of the ideal profile, with our number under the profile
# of the paper's system instead where the report has one (the same series,
# x, metric and engine), else the ideal one (a system with no profile, a
# real run): the reproduction of the paper's numbers with its systems.
function as_the_paper_ran(    i, j, k, n, g, u) {
  for (i = 1; i <= nr; i++)
    if (compared[i] && kind_of(profile_of(i)) == "system")
      sys_row[key(R[i, "series"], R[i, "x"], R[i, "metric"]) SUBSEP R[i, "engine"]] = i
  for (i = 1; i <= nr; i++) {
    if (!compared[i] || profile_of(i) != "ideal") continue
    k = key(R[i, "series"], R[i, "x"], R[i, "metric"]) SUBSEP R[i, "engine"]
    j = (k in sys_row) ? sys_row[k] : i
    n++; g += is_gap[j]; u += no_why[j]
  }
  printf "As the paper ran them (each system's profile where it has one, else ideal): %d compared, %d within 25%%, %d gaps over 25%% (%d unexplained).\n", \
         n, n - g, g, u
}

# Numbers of the ideal profile: what the report has always counted.
function nideal(    i, c) {
  c = 0
  for (i = 1; i <= nr; i++) if (profile_of(i) == "ideal") c++
  return c
}

function ncompared(    i, c) {
  c = 0
  for (i = 1; i <= nr; i++)
    if (profile_of(i) == "ideal" && key(R[i, "series"], R[i, "x"], R[i, "metric"]) in paper_row) c++
  return c
}
