# Sourced by the tools/vm fetchers: a private apt configuration for one Debian suite.
#
# It has its own sources list, package lists, download cache and an empty dpkg status, so the host's apt
# setup is neither read for packages nor changed, and nothing is installed: packages are only downloaded
# and then unpacked with dpkg-deb by the caller. The mirror is the Debian mirror the host's apt already
# uses (or $VRQ_DEBIAN_MIRROR), so no mirror is named here.
#
# Usage (after setting `cache` and defining `die`):
#   debian_apt_setup SUITE         sets apt_opts (an array of apt-get/apt-cache options) for SUITE
#   debian_apt_update              refreshes SUITE's package lists at most once a day; non-zero on failure
#                                  (the log is $aptdir/update.log)

debian_apt_setup() {
    local suite=$1 mirror keyring signed
    command -v apt-get >/dev/null || die "apt-get not found: this helper needs a Debian or Ubuntu host"
    command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
    # The Debian mirror: explicit, else the one the host's apt configuration points at.
    mirror=${VRQ_DEBIAN_MIRROR:-}
    if [ -z "$mirror" ]; then
        mirror=$(grep -rhoE '(URIs:|deb(-src)?( \[[^]]*\])?) +[a-z]+://[^ ]+/debian/?( |$)' \
                    /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
                 | grep -oE '[a-z]+://[^ ]+/debian/?' | head -n1 || true)
    fi
    [ -n "$mirror" ] || die "no Debian mirror found in the host's apt sources; set VRQ_DEBIAN_MIRROR=<url of a Debian mirror>"
    mirror=${mirror%/}

    # One private apt tree per suite, so two fetchers' package lists never mix.
    aptdir=$cache/apt-$suite
    # The kernel fetcher used to keep its trixie-backports tree in $cache/apt: reuse it rather than
    # downloading the lists again.
    [ -d "$aptdir" ] || [ ! -d "$cache/apt/lists" ] || [ "$suite" != trixie-backports ] \
        || mv "$cache/apt" "$aptdir"
    mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$cache/debs"
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    signed=""
    [ -r "$keyring" ] && signed="[signed-by=$keyring]"
    echo "deb $signed $mirror $suite main" > "$aptdir/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$aptdir/lists" -o "Dir::State::status=/dev/null"
              -o "Dir::Cache=$aptdir/cache" -o "Debug::NoLocking=1" -o "APT::Architecture=amd64"
              -o "APT::Sandbox::User=root" -q)
}

debian_apt_update() {
    local stamp=$aptdir/lists/.updated
    if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
        apt-get "${apt_opts[@]}" update >"$aptdir/update.log" 2>&1 || return 1
        touch "$stamp"
    fi
}
