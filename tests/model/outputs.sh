#!/usr/bin/env bash
# What xpack promises about the files it writes (docs/TRUST.md, "Outputs"), for every command that writes
# one (pack, pack --zstd, inflate, export --executorch):
#   - it never writes over one of its inputs, however the output names it (the same name, another path, a
#     hard or a symbolic link): exit 2, the input unchanged, nothing new in the folder;
#   - it never turns a device, FIFO, socket or folder (or a symbolic link to one) into a regular file:
#     exit 2 naming what is there; a symbolic link to a regular file is replaced, the file it points to kept;
#     a path into /proc (/dev/stdout, /dev/fd/1, a link to /proc/self/fd/1), "-" and a link loop: exit 2;
#   - it removes no file it did not make: files named like temporary files of the target (".<target>." and
#     six characters, the form of earlier versions) or like its own but locked, a folder or a link, stay,
#     and so does an input of the command named exactly like its own;
#   - output names up to NAME_MAX bytes work, and an error names the target, never a temporary file;
#   - a place it cannot write (a missing or unwritable folder, another user's file in a sticky folder, an append-only
#     or immutable folder or file) is refused before the work, and leaves nothing;
#   - a pack --zstd or a verify --model killed with SIGKILL leaves nothing: not in the output's folder, not
#     in $TMPDIR (which verify --model uses for its re-pack), nor anywhere its descriptors pointed.
# Every check runs to the end and the failures are listed, so that a binary with several faults shows all.
#   outputs.sh XPACK XPACK-GENMODEL
XPACK=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
failures=0
bad() { echo "  FAILED: $*" >&2; failures=$((failures + 1)); }
listing() { ls -A "$1" | sort | tr '\n' ' '; }

"$GEN" llm -o m.pte --ptd m.ptd --size 1M > /dev/null
"$XPACK" pack m.pte --data m.ptd -o c.xpc > /dev/null
"$XPACK" pack m.pte --data m.ptd -o z.xpc --zstd > /dev/null
for f in m.pte m.ptd c.xpc z.xpc; do cp "$f" "$f.orig"; done
: > out.txt; : > err.txt

# refused WANT_EXIT WHAT -- COMMAND...: the command exits WANT_EXIT with a message naming no temporary file,
# every input is unchanged and the folder lists what it listed before.
refused() {
  local want=$1 what=$2; shift 3
  local before st f
  before=$(listing .)
  set +e; "$@" > out.txt 2> err.txt; st=$?; set -e
  [ "$st" = "$want" ] || bad "$what: exit $st, expected $want: $(head -c 300 err.txt)"
  [ -s err.txt ] || bad "$what: no message"
  ! grep -q '\.xpack-\|XXXXXX' err.txt || bad "$what: the message names a temporary file: $(cat err.txt)"
  for f in m.pte m.ptd c.xpc z.xpc; do
    cmp -s "$f" "$f.orig" || { bad "$what: $f changed"; cp "$f.orig" "$f"; }
  done
  [ "$(listing .)" = "$before" ] || bad "$what: the folder changed: $before -> $(listing .)"
  echo "  $what: exit $st, $(head -n1 err.txt | cut -c1-160)"
}

echo "outputs that are inputs"
ln m.pte hard.pte
ln -s m.ptd soft.ptd
ln -s c.xpc soft.xpc
mkdir sub; ln -s ../z.xpc sub/z.xpc
refused 2 "pack -o the program" -- "$XPACK" pack m.pte --data m.ptd -o m.pte
refused 2 "pack -o the program by another path" -- "$XPACK" pack m.pte --data m.ptd -o "$d/./m.pte"
refused 2 "pack -o a hard link to the program" -- "$XPACK" pack m.pte --data m.ptd -o hard.pte
refused 2 "pack -o the data file" -- "$XPACK" pack m.pte --data m.ptd -o m.ptd
refused 2 "pack -o a symbolic link to the data file" -- "$XPACK" pack m.pte --data m.ptd -o soft.ptd
refused 2 "pack --zstd -o the program" -- "$XPACK" pack m.pte --data m.ptd --zstd -o m.pte
refused 2 "export onto its input" -- "$XPACK" export --executorch c.xpc c.xpc
refused 2 "export onto a link to its input" -- "$XPACK" export --executorch c.xpc soft.xpc
refused 2 "inflate onto its input" -- "$XPACK" inflate z.xpc z.xpc
refused 2 "inflate onto a link to its input elsewhere" -- "$XPACK" inflate z.xpc sub/z.xpc

echo "outputs that are not regular files"
mkfifo fifo
mkdir folder
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock
ln -s fifo link-to-fifo
kinds="fifo:FIFO folder:folder sock:socket link-to-fifo:FIFO"
if [ "$(id -u)" = 0 ]; then mknod chardev c 1 3; kinds="$kinds chardev:character"; else
  echo "  character device: not tested (needs root to make one here)"; fi
for kind in $kinds; do
  f=${kind%%:*} word=${kind#*:}
  refused 2 "pack -o $f" -- "$XPACK" pack m.pte --data m.ptd -o "$f"
  grep -q "$word" err.txt || bad "pack -o $f: the message does not say it is a $word: $(cat err.txt)"
  refused 2 "pack --zstd -o $f" -- "$XPACK" pack m.pte --data m.ptd --zstd -o "$f"
  refused 2 "inflate onto $f" -- "$XPACK" inflate z.xpc "$f"
  refused 2 "export onto $f" -- "$XPACK" export --executorch c.xpc "$f"
done
[ -p fifo ] && [ -d folder ] && [ -S sock ] && [ -L link-to-fifo ] || bad "a non-regular output was replaced"
# An empty OUT is no file: refused before the work (once each command did it all, then failed at the rename
# with "xpack: : cannot rename the temporary file into place", exit 4).
refused 2 "pack -o ''" -- "$XPACK" pack m.pte --data m.ptd -o ""
grep -q "empty path" err.txt || bad "pack -o '': the message does not say the path is empty: $(cat err.txt)"
# The output is checked before the inputs are opened (and hashed): a bad output is a usage error whatever the
# inputs are, as it is for inflate and export.
refused 2 "pack of a missing program into a folder" -- "$XPACK" pack missing.pte -o folder
# A missing input whose name starts with OUT's and ':' is still a bad input (3), not an output's failure (4).
refused 3 "inflate of a missing input named 'OUT: x'" -- "$XPACK" inflate "new.xpc: x" new.xpc
refused 2 "pack -o the data file given as a program" -- "$XPACK" pack m.pte --data c.xpc -o c.xpc
refused 2 "pack --zstd -o ''" -- "$XPACK" pack m.pte --data m.ptd --zstd -o ""
refused 2 "inflate onto ''" -- "$XPACK" inflate z.xpc ""
refused 2 "export onto ''" -- "$XPACK" export --executorch c.xpc ""
# A path into /proc, itself or through a link, is a process's descriptor: renaming over it would replace the
# link (as root, /dev/stdout itself) and write nothing to the descriptor. "-" is no file; a link loop leads
# nowhere.
ln -s /proc/self/fd/1 to-stdout
ln -s to-stdout to-to-stdout
ln -s loop-b loop-a; ln -s loop-a loop-b
for out in /dev/stdout /dev/fd/1 /proc/self/fd/1 to-stdout to-to-stdout; do
  refused 2 "pack -o $out" -- "$XPACK" pack m.pte --data m.ptd -o "$out"
  grep -q "leads into /proc" err.txt || bad "pack -o $out: the message does not say it leads into /proc: $(cat err.txt)"
  refused 2 "inflate onto $out" -- "$XPACK" inflate z.xpc "$out"
  refused 2 "export onto $out" -- "$XPACK" export --executorch c.xpc "$out"
done
[ "$(readlink /dev/stdout)" = /proc/self/fd/1 ] || bad "/dev/stdout is no longer the link to /proc/self/fd/1"
[ "$(readlink to-stdout)" = /proc/self/fd/1 ] || bad "the link to /proc/self/fd/1 was replaced"
refused 2 "pack -o -" -- "$XPACK" pack m.pte --data m.ptd -o -
refused 2 "pack -o a link loop" -- "$XPACK" pack m.pte --data m.ptd -o loop-a
grep -q "symbolic links" err.txt || bad "pack -o a link loop: the message does not say why: $(cat err.txt)"
[ -L loop-a ] && [ -L loop-b ] || bad "a link of a loop was replaced"
[ ! -e chardev ] || [ -c chardev ] || bad "the character device was replaced"
# A symbolic link to a regular file, or a dangling one, is replaced; what it pointed to stays.
cp c.xpc.orig pointed.xpc
ln -s pointed.xpc link.xpc
ln -s nowhere dangling.xpc
for out in link.xpc dangling.xpc; do
  "$XPACK" pack m.pte --data m.ptd --zstd -o "$out" > /dev/null 2> err.txt || bad "pack -o $out: $(cat err.txt)"
  [ -f "$out" ] && [ ! -L "$out" ] && cmp -s "$out" z.xpc || bad "pack -o $out did not replace the link with the cache"
done
cmp -s pointed.xpc c.xpc.orig || bad "the file a replaced link pointed to changed"
[ ! -e nowhere ] || bad "a pack wrote through a dangling link"
echo "  links to a regular file and dangling links are replaced; the file pointed to is unchanged"

echo "files xpack did not make"
mkdir keep && cd keep
cp ../c.xpc.orig c2.xpc
echo backup > .c2.xpc.backup                # named like the temporary files of earlier versions
echo user > .c2.xpc.AbC123
echo other > .xpack-AbC123.tmp.bak          # our marker, not our form
mkdir .xpack-Dir123.tmp                     # our form, not a regular file
ln -s c2.xpc .xpack-Lnk123.tmp              # our form, a link
echo held > .xpack-Held01.tmp               # our form, locked: a writer still runs
echo killed > .xpack-Dead01.tmp             # our form, unlocked: a killed writer's (the one to remove)
exec 9< .xpack-Held01.tmp
flock -x 9
# Also with named temporary files from the start, as on a file system without O_TMPFILE.
for named in "" XPACK_TEST_NAMED_TEMP=1; do
  for cmd in "pack ../m.pte --data ../m.ptd -o c2.xpc" "pack ../m.pte --data ../m.ptd --zstd -o c2.xpc" \
             "inflate ../z.xpc c2.xpc" "export --executorch ../c.xpc c2.xpc"; do
    # shellcheck disable=SC2086
    env $named "$XPACK" $cmd > /dev/null 2> ../err.txt || bad "$named $cmd: $(cat ../err.txt)"
    want=".c2.xpc.AbC123 .c2.xpc.backup .xpack-AbC123.tmp.bak .xpack-Dir123.tmp .xpack-Held01.tmp .xpack-Lnk123.tmp c2.xpc "
    [ "$(listing .)" = "$want" ] || bad "$named $cmd: the folder holds $(listing .), expected $want"
    echo "  $named $cmd: only the unlocked leftover of our exact form went"
    echo killed > .xpack-Dead01.tmp
  done
done
exec 9<&-
# An input named like a killed writer's file (someone verifying or inflating one) is read, never removed.
for named in "" XPACK_TEST_NAMED_TEMP=1; do
  for run in "../m.pte pack .xpack-Inpt01.tmp --data ../m.ptd -o c2.xpc" "../z.xpc inflate .xpack-Inpt01.tmp c2.xpc" \
             "../c.xpc export --executorch .xpack-Inpt01.tmp c2.xpc"; do
    from=${run%% *} cmd=${run#* }
    cp "$from" .xpack-Inpt01.tmp
    # shellcheck disable=SC2086
    env $named "$XPACK" -q $cmd > /dev/null 2> ../err.txt || bad "$named $cmd: $(cat ../err.txt)"
    cmp -s .xpack-Inpt01.tmp "$from" || bad "$named $cmd: its input, named like a leftover, was removed or changed"
  done
  rm -f .xpack-Inpt01.tmp
done
echo "  inputs named like leftovers stay"
# verify --model packs into scratch space (TMPDIR) that is no output's folder: nothing there is swept, not its own
# inputs named like leftovers, not an unlocked leftover (once, both inputs of this command were removed).
cp ../c.xpc .xpack-Inpt01.tmp && cp ../m.pte .xpack-Inpt02.tmp && cp ../m.ptd .xpack-Inpt03.tmp
echo killed > .xpack-Dead02.tmp
for named in "" XPACK_TEST_NAMED_TEMP=1; do
  env $named TMPDIR="$PWD" "$XPACK" -q verify .xpack-Inpt01.tmp --model .xpack-Inpt02.tmp --data .xpack-Inpt03.tmp \
    > /dev/null 2> ../err.txt || bad "$named verify --model of inputs named like leftovers: $(cat ../err.txt)"
  cmp -s .xpack-Inpt01.tmp ../c.xpc && cmp -s .xpack-Inpt02.tmp ../m.pte && cmp -s .xpack-Inpt03.tmp ../m.ptd ||
    bad "$named verify --model: an input named like a leftover was removed or changed"
  [ -e .xpack-Dead02.tmp ] || bad "$named verify --model swept its scratch folder"
done
rm -f .xpack-Inpt0[123].tmp .xpack-Dead02.tmp
echo "  verify --model sweeps no scratch folder and keeps its inputs"
# Nor does an output written into a shared scratch folder (TMPDIR, a sticky folder everyone may write into), and
# no sweep removes another user's file (a review found `-o $TMPDIR/x.xpc` sweeping TMPDIR).
echo killed > .xpack-Dead03.tmp
TMPDIR="$PWD" "$XPACK" -q pack ../m.pte --data ../m.ptd -o c3.xpc 2> ../err.txt || bad "pack into TMPDIR: $(cat ../err.txt)"
[ -e .xpack-Dead03.tmp ] || bad "pack -o \$TMPDIR/c3.xpc swept TMPDIR"
mkdir shared && chmod 1777 shared && echo killed > shared/.xpack-Dead04.tmp
"$XPACK" -q pack ../m.pte --data ../m.ptd -o shared/c.xpc 2> ../err.txt || bad "pack into a sticky folder: $(cat ../err.txt)"
[ -e shared/.xpack-Dead04.tmp ] || bad "pack into a sticky folder everyone may write into swept it"
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
  mkdir others && echo killed > others/.xpack-Dead05.tmp
  chown nobody others/.xpack-Dead05.tmp || bad "chown nobody (root without the right to give files away?)"
  "$XPACK" -q pack ../m.pte --data ../m.ptd -o others/c.xpc 2> ../err.txt || bad "pack beside another user's leftover: $(cat ../err.txt)"
  [ -e others/.xpack-Dead05.tmp ] || bad "a sweep removed another user's file"
  echo killed > others/.xpack-Dead06.tmp
  "$XPACK" -q pack ../m.pte --data ../m.ptd -o others/c.xpc 2> ../err.txt || bad "pack beside its own leftover: $(cat ../err.txt)"
  [ ! -e others/.xpack-Dead06.tmp ] || bad "a sweep kept this user's own leftover"
fi
rm -rf .xpack-Dead03.tmp c3.xpc shared others
echo "  outputs in shared scratch folders sweep nothing; another user's leftover stays"
# An output may not be named like a temporary file: a later write in its folder would remove it as a leftover.
echo mine > .xpack-Mine01.tmp
for cmd in "pack ../m.pte --data ../m.ptd -o" "inflate ../z.xpc" "export --executorch ../c.xpc"; do
  for out in .xpack-Mine01.tmp .xpack-Made01.tmp; do
    set +e; "$XPACK" $cmd "$out" > /dev/null 2> ../err.txt; st=$?; set -e
    [ "$st" = 2 ] && grep -q "form of xpack's temporary files" ../err.txt ||
      bad "$cmd $out: exit $st, expected 2 naming the temporary-file form: $(cat ../err.txt)"
  done
  [ "$(cat .xpack-Mine01.tmp)" = mine ] && [ ! -e .xpack-Made01.tmp ] || bad "$cmd: an output named like a temporary file was written"
done
rm .xpack-Mine01.tmp
echo "  outputs named like temporary files are refused (exit 2), the file of that name unchanged"
cd ..
# An output whose folder leaves no room for a temporary file's name under PATH_MAX is refused before any work
# (it failed at the link, after packing, with a message cut short).
deep=$(python3 -c 'print("./" * 2040, end="")')
for cmd in "pack m.pte --data m.ptd -o" "inflate z.xpc" "export --executorch c.xpc"; do
  set +e; "$XPACK" $cmd "${deep}long.xpc" > /dev/null 2> err.txt; st=$?; set -e
  [ "$st" = 2 ] && grep -q "would pass PATH_MAX" err.txt || bad "$cmd into a folder of 4080 bytes: exit $st: $(tail -c 300 err.txt)"
done
[ ! -e long.xpc ] || bad "an output was written into a folder too deep for its temporary file"
echo "  a folder too long for a temporary file beside the output: refused before the work (exit 2)"

echo "modes of outputs"
# An output gets the mode any new file of the user's gets: 0666 less the umask (once a fixed 0644, which made
# the packed weights of a private model readable by everyone under umask 077).
mkdir modes
for mask in 077 022 002; do
  want=$(printf '%o' $((0666 & ~0$mask)))
  for cmd in "pack m.pte --data m.ptd -o modes/o.xpc" "pack m.pte --data m.ptd --zstd=1 -o modes/o.xpc" \
             "inflate z.xpc modes/o.xpc" "export --executorch c.xpc modes/o.xpc"; do
    for named in "" XPACK_TEST_NAMED_TEMP=1; do
      rm -f modes/o.xpc
      # shellcheck disable=SC2086
      (umask $mask; env $named "$XPACK" -q $cmd > /dev/null 2> err.txt) || bad "umask $mask $named $cmd: $(cat err.txt)"
      got=$(stat -c %a modes/o.xpc 2> /dev/null || echo none)
      [ "$got" = "$want" ] || bad "umask $mask $named $cmd: mode $got, expected $want"
    done
  done
done
rm -rf modes
echo "  pack, pack --zstd, inflate and export: mode 0666 less the umask (077, 022, 002)"

echo "long output names"
long=$(printf 'n%.0s' $(seq 251)).xpc   # 255 bytes, NAME_MAX
for cmd in "pack m.pte --data m.ptd -o $long" "pack m.pte --data m.ptd --zstd -o $long" "inflate z.xpc $long" \
           "export --executorch c.xpc $long"; do
  rm -f "$long"
  # shellcheck disable=SC2086
  "$XPACK" $cmd > /dev/null 2> err.txt && [ -s "$long" ] || bad "${cmd/$long/<255 bytes>}: $(cut -c1-200 err.txt)"
done
rm -f "$long"
echo "  pack, pack --zstd, inflate and export write an output named with 255 bytes"
# An error names the target: a missing folder.
set +e; "$XPACK" pack m.pte --data m.ptd --zstd -o "missing/$long" > /dev/null 2> err.txt; st=$?; set -e
[ "$st" = 2 ] && grep -q "^xpack: missing/$long: " err.txt || bad "an error on a long name: exit $st: $(cut -c1-300 err.txt)"
echo "  an error names the target: exit $st"

echo "output paths where no file can be made"
# Refused before the work (once they failed at the rename, exit 4, after packing everything): a bad value
# of -o is exit 2 naming what is wrong; pack -v shows that no delegate was packed.
too_long=$(printf 'n%.0s' $(seq 252)).xpc   # 256 bytes, one more than NAME_MAX
# where_refused WHAT WORDS OUT: every command writing OUT exits 2 with a message holding WORDS.
where_refused() {
  local what=$1 words=$2 out=$3 cmd
  for cmd in "pack -v m.pte --data m.ptd -o" "pack -v m.pte --data m.ptd --zstd -o" "inflate z.xpc" \
             "export --executorch c.xpc"; do
    # shellcheck disable=SC2086
    refused 2 "${cmd%% *} $what" -- "$XPACK" $cmd "$out"
    grep -q -- "$words" err.txt || bad "$cmd $what: the message does not say '$words': $(cut -c1-300 err.txt)"
    ! grep -q "^packed " err.txt || bad "$cmd $what: refused only after packing: $(cut -c1-300 err.txt)"
  done
}
where_refused "-o ending in /" "ends in '/'" new.xpc/
where_refused "-o in a missing folder" "folder missing does not exist" missing/new.xpc
where_refused "-o under a regular file" "Not a directory" m.pte/new.xpc
where_refused "-o of 256 bytes" "too long" "$too_long"
where_refused "-o of 256 bytes in a folder" "too long" "keep/$too_long"
# A folder the user may not write into is "could not complete" (exit 4), but found before the work too. Root
# may write anywhere, so this runs as nobody, from a copy of the inputs nobody can read.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  ro=$(mktemp -d); chmod 755 "$ro"; cp m.pte m.ptd "$ro"/; chmod 644 "$ro"/m.*
  cp "$XPACK" "$ro/xpack"; chmod 755 "$ro/xpack"
  set +e
  (cd "$ro" && setpriv --reuid=nobody --regid=nogroup --clear-groups ./xpack pack -v m.pte --data m.ptd -o out.xpc) \
    > /dev/null 2> err.txt; st=$?
  set -e
  [ "$st" = 4 ] && grep -q "cannot write into the output's folder" err.txt && ! grep -q "^packed " err.txt ||
    bad "pack -o into a folder nobody may write: exit $st: $(cut -c1-300 err.txt)"
  [ ! -e "$ro/out.xpc" ] || bad "pack -o into a folder nobody may write wrote it"
  # Another user's file in a sticky folder everyone may write into: only its owner or the folder's may replace it.
  mkdir "$ro/sticky" && chmod 1777 "$ro/sticky" && echo root > "$ro/sticky/out.xpc" && chmod 644 "$ro/sticky/out.xpc"
  set +e
  (cd "$ro" && setpriv --reuid=nobody --regid=nogroup --clear-groups ./xpack pack -v m.pte --data m.ptd -o sticky/out.xpc) \
    > /dev/null 2> err.txt; st=$?
  set -e
  [ "$st" = 4 ] && grep -q "belongs to another user (uid 0) in a folder with the sticky bit" err.txt &&
    ! grep -q "^packed " err.txt || bad "pack -o over root's file in a sticky folder, as nobody: exit $st: $(cut -c1-300 err.txt)"
  [ "$(cat "$ro/sticky/out.xpc")" = root ] || bad "root's file in the sticky folder changed"
  rm -rf "$ro"
  echo "  a folder the user may not write into, another user's file in a sticky folder: exit 4 before the work"
else
  echo "  a folder the user may not write into: not tested (needs root and setpriv to be another user)"
fi

# chattr's attributes, which root's permissions do not pass: a finished file cannot be renamed into an append-only or
# immutable folder, nor over an append-only or immutable file, and an append-only folder would also keep the
# temporary file's name. Refused before the work (exit 4), nothing left, the file unchanged.
mkdir attr_a attr_i
cp c.xpc.orig attr.xpc
if [ "$(id -u)" = 0 ] && chattr +a attr_a 2> /dev/null; then
  chattr +i attr_i; chattr +i attr.xpc
  for case in "attr_a/out.xpc:the output's folder attr_a is append-only (chattr)" \
              "attr_i/out.xpc:the output's folder attr_i is immutable (chattr)" \
              "attr.xpc:attr.xpc: is immutable (chattr)"; do
    target=${case%%:*} want=${case#*:}
    set +e
    "$XPACK" pack -v m.pte --data m.ptd -o "$target" > /dev/null 2> err.txt; st=$?
    set -e
    [ "$st" = 4 ] && grep -qF "$want" err.txt && ! grep -q "^packed " err.txt ||
      bad "pack -o $target: exit $st, expected 4 and \"$want\" before the work: $(cut -c1-300 err.txt)"
  done
  chattr -i attr.xpc; chattr +a attr.xpc
  set +e
  "$XPACK" inflate z.xpc attr.xpc > /dev/null 2> err.txt; st=$?
  set -e
  [ "$st" = 4 ] && grep -qF "attr.xpc: is append-only (chattr)" err.txt ||
    bad "inflate over an append-only file: exit $st: $(cut -c1-300 err.txt)"
  chattr -a attr.xpc attr_a; chattr -i attr_i
  [ -z "$(ls -A attr_a)$(ls -A attr_i)" ] || bad "an append-only or immutable folder kept a file: $(ls -A attr_a attr_i)"
  # A user who may write into the folder but not read it (a drop folder, 0300): the attribute is still seen (it was
  # read by opening the folder, which that user cannot, and the work failed at the rename, the temporary file left).
  if command -v setpriv > /dev/null; then
    drop=$(mktemp -d); chmod 755 "$drop"; cp m.pte m.ptd "$drop"/; chmod 644 "$drop"/m.*
    cp "$XPACK" "$drop/xpack"; chmod 755 "$drop/xpack"
    mkdir "$drop/W" && chown nobody "$drop/W" && chmod 0300 "$drop/W" && chattr +a "$drop/W"
    set +e
    (cd "$drop" && setpriv --reuid=nobody --regid=nogroup --clear-groups ./xpack pack -v m.pte --data m.ptd -o W/o.xpc) \
      > /dev/null 2> err.txt; st=$?
    set -e
    chattr -a "$drop/W"
    [ "$st" = 4 ] && grep -qF "the output's folder W is append-only (chattr)" err.txt && ! grep -q "^packed " err.txt ||
      bad "pack -o into an append-only folder nobody may read, as nobody: exit $st: $(cut -c1-300 err.txt)"
    [ -z "$(ls -A "$drop/W")" ] || bad "the append-only drop folder kept a file: $(ls -A "$drop/W")"
    rm -rf "$drop"
  fi
  cmp -s attr.xpc c.xpc.orig || bad "an immutable or append-only output changed"
  echo "  append-only and immutable folders and files (chattr), also a folder the user cannot read: exit 4 before the work, nothing left"
else
  echo "  append-only and immutable folders and files: not tested (needs root and a file system with chattr's attributes)"
fi
rm -rf attr_a attr_i attr.xpc

echo "killed with SIGKILL"
mkdir killed tmp
"$GEN" llm -o big.pte --size 96M > /dev/null
"$XPACK" pack big.pte -o big.xpc > /dev/null
# kill_mid_write PREFIX -- COMMAND...: starts COMMAND, waits until it has a file of at least 1 MB open
# whose path starts with PREFIX (polling with one find per round), records in fds.txt that file and where
# every descriptor of the process points, and kills it with SIGKILL. Tries up to five times, since a
# loaded machine may miss the window; returns 1 when it never caught the command mid-write.
kill_mid_write() {
  local prefix=$1 attempt pid fd; shift 2
  for attempt in 1 2 3 4 5; do
    "$@" > /dev/null 2>&1 &
    pid=$!
    : > fds.txt
    while kill -0 "$pid" 2> /dev/null; do
      find -L /proc/"$pid"/fd -maxdepth 1 -size +1M 2> /dev/null | while read -r fd; do
        case "$(readlink "$fd")" in "$d"/big.*) ;; "$prefix"*) readlink "$fd" ;; esac
      done > matched.txt
      [ -s matched.txt ] && break
    done
    { cat matched.txt; for fd in /proc/"$pid"/fd/*; do readlink "$fd" 2> /dev/null || :; done; } > fds.txt
    kill -KILL "$pid" 2> /dev/null || true
    { wait "$pid"; } 2> /dev/null || true
    [ -s matched.txt ] && return 0
  done
  return 1
}
for round in 1 2 3; do
  kill_mid_write "$d/killed/" -- "$XPACK" pack big.pte -o killed/z.xpc --zstd ||
    bad "pack --zstd (round $round) was never caught writing in the output's folder"
  [ -z "$(ls -A killed)" ] || bad "pack --zstd killed mid-write (round $round) left: $(listing killed)"
done
echo "  pack --zstd killed mid-write: nothing left in the output's folder"
# What every child of this script inherits open (when ctest runs under /tmp, its own log files).
for fd in /proc/$$/fd/*; do readlink "$fd" 2> /dev/null || :; done > inherited.txt
for round in 1 2; do
  # Caught in $TMPDIR, or where earlier versions wrote (then the checks below list what they left).
  kill_mid_write /tmp/ -- env TMPDIR="$d/tmp" "$XPACK" verify big.xpc --model big.pte ||
    bad "verify --model (round $round) was never caught writing its re-pack"
  grep -q "^$d/tmp/" matched.txt || bad "verify --model (round $round) wrote outside \$TMPDIR: $(tr '\n' ' ' < matched.txt)"
  [ -z "$(ls -A tmp)" ] || bad "verify --model killed mid-re-pack (round $round) left in \$TMPDIR: $(listing tmp)"
  while read -r path; do   # no file it had open is left, nor a folder it made for one
    grep -qxF -- "$path" inherited.txt && continue   # the test runner's own files (ctest's logs), not verify's
    case "$path" in "$d"/big.*) ;; /tmp/*)
      [ ! -e "$path" ] || bad "verify --model killed (round $round) left $path"
      case "${path%/*}" in "$d" | "$d/tmp" | /tmp) ;; *)
        [ ! -e "${path%/*}" ] || bad "verify --model killed (round $round) left ${path%/*}: $(ls -A "${path%/*}")" ;; esac ;;
    esac
  done < fds.txt
done
echo "  verify --model killed mid-re-pack: its re-pack was in \$TMPDIR and nothing is left"

echo "bench interrupted"
# bench packs into a folder of its own under $TMPDIR and removes it at the end; interrupted (Ctrl-C, a closed
# terminal, SIGTERM) once it left the folder and the whole packed cache there.
mkdir btmp
for sig in INT TERM HUP; do
  # Job control on: a background job of a script would otherwise start with SIGINT ignored.
  (set -m
   env TMPDIR="$d/btmp" "$XPACK" bench m.pte --data m.ptd --reps 101 > /dev/null 2>&1 &
   pid=$!
   for _ in $(seq 600); do [ -n "$(find btmp -name bench.xpc)" ] && break; sleep 0.05; done
   [ -n "$(find btmp -name bench.xpc)" ] || : > never-packed
   kill -"$sig" "$pid"
   wait "$pid" 2> /dev/null || true)
  [ ! -e never-packed ] || bad "bench (SIG$sig) never packed its cache: not interrupted mid-run"
  rm -f never-packed
  [ -z "$(ls -A btmp)" ] || bad "bench interrupted by SIG$sig left in \$TMPDIR: $(find btmp | tr '\n' ' ')"
  rm -rf btmp/*
done
echo "  bench interrupted by SIGINT, SIGTERM, SIGHUP: nothing left in \$TMPDIR"

[ "$failures" = 0 ] || fail "$failures check(s) failed"
echo "outputs: ok"
