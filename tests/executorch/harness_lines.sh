# Sourced by the scripts that read et_harness_xpack's output (et_adapter.sh, tests/cross/et_adapter_devices.sh).
# xf FILE KEY: KEY=value of the "xpack ..." line (the loader's counters)
xf() { sed -n "s/^xpack .*\b$2=\([0-9a-z]*\).*/\1/p" "$1"; }
# tf FILE KEY: KEY=value of the "total ..." line (the harness's own counters)
tf() { sed -n "s/^total .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
# cand FILE I KEY: KEY=value of the line "xpack candidate I: ..." (what attach_best found of file I)
cand() { sed -n "s/^xpack candidate $2: .*\b$3=\([0-9]*\).*/\1/p" "$1"; }
# same A B: the two runs' outputs are identical
same() { diff <(grep '^output' "$1") <(grep '^output' "$2") > /dev/null; }
