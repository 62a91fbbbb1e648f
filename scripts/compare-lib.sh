# compare-lib.sh: what the compare-*.sh scripts share. They source it from
# the repository's root:  . scripts/compare-lib.sh

# make_work makes $work, a temporary directory removed when the script
# exits.
make_work() {
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
}

# build_mpi PROGRAM builds scoll, scoll with -tags mpi (scoll-mpi) and
# scripts/PROGRAM.c into $work, exiting if one fails; lets Open MPI run as
# root and oversubscribe the cores; and prints the MPI library's version.
build_mpi() {
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	go build -o "$work/scoll" ./cmd/scoll &&
		go build -tags mpi -o "$work/scoll-mpi" ./cmd/scoll &&
		mpicc -O2 -o "$work/$1" "scripts/$1.c" || exit 1
	mpirun --version | head -1
}

# medians FILE SORT-KEY... prints, for the CSV lines "key...,value" of FILE
# (the key is every field but the last), one line "key...,median" per key,
# in the order of sort -t, with the keys given (they must order each key's
# values numerically).
medians() {
	local file=$1
	shift
	sort -t, "$@" "$file" | awk -F, '
		{ k = $0; sub(/,[^,]*$/, "", k); v[k, ++n[k]] = $NF; if (!(k in seen)) { seen[k] = 1; keys[++m] = k } }
		END { for (i = 1; i <= m; i++) { k = keys[i]; printf "%s,%s\n", k, v[k, int((n[k] + 1) / 2)] } }'
}
