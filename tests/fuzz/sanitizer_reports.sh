# Sourced by the scripts that run sanitized builds (run_fuzzers.sh, cli_sweep.sh, tests/tsan/run_tsan.sh), so that
# all of them take the same lines for a finding.
# sanitizer_report LOG: prints LOG's first line that reports a finding of AddressSanitizer, LeakSanitizer, UBSan,
# ThreadSanitizer or libFuzzer, or a failed assert; status 0 when there is one, 1 when there is none.
sanitizer_report() {
  grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|WARNING: ThreadSanitizer|Assertion .*failed' "$1"
}
