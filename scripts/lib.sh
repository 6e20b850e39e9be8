# scripts/lib.sh -- helpers shared by the project's scripts (sourced, not run).
#
# PostgreSQL refuses to run its server as root, so when a script runs as
# root (as CI does) the server side runs as an unprivileged user, created
# here on first use, from a copy of the tree that user owns.

PG_MAJOR=${PG_MAJOR:-18}
PGSQ_CACHE=${PGSQ_CACHE:-/opt/pgsq}
PGSQ_TEST_USER=${PGSQ_TEST_USER:-pgsqtest}
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# pg_config of one of our cached builds: pg_config_of assert|release
pg_config_of() {
	echo "$PGSQ_CACHE/$PG_MAJOR-$1/bin/pg_config"
}

# Make sure the unprivileged user exists when we are root
ensure_test_user() {
	[ "$(id -u)" -eq 0 ] || return 0
	id "$PGSQ_TEST_USER" >/dev/null 2>&1 ||
		useradd --create-home --shell /bin/bash "$PGSQ_TEST_USER"
}

# Run a shell command as the unprivileged user (or as ourselves if not root)
as_test_user() {
	if [ "$(id -u)" -eq 0 ]; then
		su "$PGSQ_TEST_USER" -s /bin/bash -c "$1"
	else
		bash -c "$1"
	fi
}

# Copy the tree to a directory the test user owns; prints its path
copy_tree_for_test_user() {
	local dest=$1
	rm -rf "$dest"
	mkdir -p "$dest"
	(cd "$REPO_ROOT" && tar --exclude=.git --exclude='tmp_*' --exclude=results \
		--exclude=output_iso -cf - .) | tar -C "$dest" -xf -
	[ "$(id -u)" -eq 0 ] && chown -R "$PGSQ_TEST_USER" "$dest"
	echo "$dest"
}

# A free TCP port on localhost, starting from $1
free_port() {
	local port=$1
	while (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null; do
		port=$((port + 1))
	done
	echo "$port"
}
