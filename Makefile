# memtrack: kernel module, user tools, tests.
#
#   make                  module for KVER (default: running kernel, else the
#                         newest installed headers) + user tools
#   make KVER=<release>   module for that kernel -> build/<release>/memtrack.ko
#                         (5.10 and 7.2: inside the build root that
#                         scripts/buildroot bullseye|sid made)
#   make check            install what is missing, build for the four kernels,
#                         run host and VM tests; ends with "N passed, N failed"
#   make check SUITE=core TEST=brk_growth KERNEL=6.12
#                         one suite (tests/suites.ini), one test, one kernel
#   make run              show memtrack working (in a VM where the host
#                         cannot load modules)
#   make install          module, tools, udev rule, modules-load snippet,
#                         memtrackd's units and config, man pages, completions
#   make install-user     the programs, man pages and completions only (no
#                         module: containers, machines that cannot load one)
#   make install-dkms     the module's sources to /usr/src/memtrack-VERSION
#                         and dkms add (dkms then builds it for each kernel)
#   make uninstall        remove what install put there (a changed
#                         memtrackd.conf stays)
#   DESTDIR=, PREFIX= (/usr/local), as usual
#
# W=1 and C=1 pass through to kbuild.

TOP := $(CURDIR)
# the release, one place: the tools' --version and memtrackd's build_info
VERSION := $(shell cat $(TOP)/VERSION)
KVER ?= $(shell $(TOP)/scripts/kernel-release)
KDIR ?= /lib/modules/$(KVER)/build
KOBJ := $(TOP)/build/$(KVER)/obj

# Kernels whose compiler and kbuild tools the host lacks (5.10, 7.2) are
# built inside their own Debian root (scripts/buildroot), with the checkout
# mounted at the same path there, so paths and symlinks mean the same inside
# and out.  Headers installed on the host win.
MEMTRACK_CACHE ?= /var/cache/memtrack
KROOT := $(if $(wildcard /lib/modules/$(KVER)/build),,$(wildcard $(MEMTRACK_CACHE)/kernels/$(KVER)/root))
KRUN := $(if $(KROOT),MEMTRACK_BIND=$(TOP) $(TOP)/scripts/inroot $(KROOT))
# Another architecture's kernel (RELEASE-arm64) is cross-built in its build
# root (scripts/buildroot bookworm-arm64) with Debian's cross compiler.
ARM64_TRIPLE := aarch64-linux-gnu
KCROSS := $(if $(filter %-arm64,$(KVER)),ARCH=arm64 CROSS_COMPILE=$(ARM64_TRIPLE)-)

KMOD_FILES := $(wildcard kmod/*.c kmod/*.h)
KMOD_DEPS := Kbuild VERSION $(KMOD_FILES) $(wildcard include/uapi/linux/*.h) \
	$(wildcard kmod/features/*.c) kmod/features/detect kmod/features/exports

BIN := build/bin

DESTDIR ?=
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
SBINDIR := $(PREFIX)/sbin
LIBDIR := $(PREFIX)/lib/memtrack
MANDIR := $(PREFIX)/share/man
DOCDIR := $(PREFIX)/share/doc/memtrack
# where bash-completion looks (it searches /usr/local/share too) and where
# systemd reads units, as their own .pc files say
COMPLETIONSDIR ?= $(if $(filter /usr,$(PREFIX)),$(shell pkg-config --variable=completionsdir bash-completion 2>/dev/null),$(PREFIX)/share/bash-completion/completions)
UNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
DKMS_SRC ?= $(DESTDIR)/usr/src

TOOLS := memtrack-top memtrack-leak memtrack-events memtrack-query
MAN_SRCS := $(wildcard doc/man/*.scd)
MANS := $(patsubst doc/man/%.scd,build/man/%,$(MAN_SRCS))
UNITS := memtrackd.service memtrackd-aggregate.service

.PHONY: all module user man progs leak-progs check run install install-user \
	install-memtrackd install-dkms dkms-source uninstall clean user-arm64 \
	user-arm64-locked bench-progs bench-progs-arm64 FORCE

all: module user man progs

module: build/$(KVER)/memtrack.ko

# kbuild writes objects next to the sources, so each kernel gets its own tree
# of links to them.
build/$(KVER)/memtrack.ko: $(KMOD_DEPS) FORCE
	@$(KRUN) test -d $(KDIR) || { echo "no kernel headers for $(KVER): run scripts/install-deps (6.1, 6.12) or scripts/buildroot bullseye|sid (5.10, 7.2)" >&2; exit 1; }
	@mkdir -p $(KOBJ)/kmod
	@find $(KOBJ)/kmod -maxdepth 1 -type l -delete
	@ln -sfn $(TOP)/include $(KOBJ)/include
	@ln -sf $(TOP)/Kbuild $(KOBJ)/Kbuild
	@ln -sf $(TOP)/VERSION $(KOBJ)/VERSION
	@for f in $(KMOD_FILES); do ln -sf $(TOP)/$$f $(KOBJ)/$$f; done
	@if [ ! -f $(KOBJ)/memtrack_features.h ] || \
	    [ -n "$$(find kmod/features -newer $(KOBJ)/memtrack_features.h)" ]; then \
		$(KRUN) env $(KCROSS) kmod/features/detect $(KDIR) $(KOBJ); fi
	$(KRUN) $(MAKE) -C $(KDIR) M=$(KOBJ) $(KCROSS) modules
	@# replaced whole, and only when it changed: a VM may be loading it
	@cmp -s $(KOBJ)/memtrack.ko $@ || { cp $(KOBJ)/memtrack.ko $@.tmp && mv $@.tmp $@; }

user:
	@if [ -f user/Makefile ]; then $(MAKE) -C user TOP=$(TOP) BIN=$(TOP)/$(BIN); fi

# The workloads and leak fixtures the tests drive: tests/Makefile.
progs leak-progs:
	@$(MAKE) --no-print-directory -C tests TOP=$(TOP) $@

# arm64: the user tools, their unit tests and helpers, the workloads and
# leak fixtures, cross-built in scripts/buildroot bookworm-arm64's root into
# build/arm64/ (laid out as build/ is: bin, lib, tests), for the arm64 guest
# (tests/vm/run --kernel arm64-6.1), which sees it as its build/.
ARM64_ROOT := $(MEMTRACK_CACHE)/roots/bookworm-arm64
ARM64_B := $(TOP)/build/arm64
ARM64_MAKE := MEMTRACK_BIND=$(TOP) $(TOP)/scripts/inroot $(ARM64_ROOT) \
	$(MAKE) --no-print-directory CC=$(ARM64_TRIPLE)-gcc-12 \
	CXX=$(ARM64_TRIPLE)-g++-12 AR=$(ARM64_TRIPLE)-ar \
	"PKG_CONFIG=env PKG_CONFIG_LIBDIR=/usr/lib/$(ARM64_TRIPLE)/pkgconfig:/usr/share/pkgconfig pkg-config"

# One build at a time: make check builds it for each arm64 kernel, on two lanes.
user-arm64:
	@test -d $(ARM64_ROOT)/usr/lib/$(ARM64_TRIPLE) || { echo "no arm64 build root: run scripts/buildroot bookworm-arm64" >&2; exit 1; }
	@mkdir -p $(TOP)/build
	@flock $(TOP)/build/.arm64.lock $(MAKE) --no-print-directory user-arm64-locked

user-arm64-locked:
	$(ARM64_MAKE) -C user TOP=$(TOP) BIN=$(ARM64_B)/bin LIBDIR=$(ARM64_B)/lib \
		OBJDIR=$(ARM64_B)/user TESTDIR=$(ARM64_B)/tests/user all tests
	$(ARM64_MAKE) -C tests TOP=$(TOP) TESTBIN=$(ARM64_B)/tests progs leak-progs

# The benches' programs (bench/Makefile): the host's, and arm64's into
# build/arm64/bench/ (seen by the arm64 guest as build/bench/, which must
# be there to be covered).
bench-progs:
	@$(MAKE) --no-print-directory -C bench TOP=$(TOP)

bench-progs-arm64:
	@test -d $(ARM64_ROOT)/usr/lib/$(ARM64_TRIPLE) || { echo "no arm64 build root: run scripts/buildroot bookworm-arm64" >&2; exit 1; }
	@mkdir -p $(TOP)/build/bench
	$(ARM64_MAKE) -C bench TOP=$(TOP) BENCHBIN=$(ARM64_B)/bench

# SUITE=name(s) [TEST=name(s)] [KERNEL=series]: one suite, one test, one
# kernel (scripts/check says how).
check:
	@SUITE="$(SUITE)" TEST="$(TEST)" KERNEL="$(KERNEL)" scripts/check

run:
	@scripts/run-demo

# scdoc (doc/man/NAME.SECTION.scd) -> build/man/NAME.SECTION
man: $(MANS)

build/man/%: doc/man/%.scd
	@mkdir -p $(dir $@)
	@command -v scdoc >/dev/null || { echo "scdoc is missing: scripts/install-deps (or apt-get install scdoc)" >&2; exit 1; }
	scdoc <$< >$@.tmp && mv $@.tmp $@

install: module install-user install-memtrackd
	install -D -m 0644 build/$(KVER)/memtrack.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/memtrack.ko
	install -D -m 0644 packaging/99-memtrack.rules \
		$(DESTDIR)/etc/udev/rules.d/99-memtrack.rules
	install -D -m 0644 packaging/memtrack.conf \
		$(DESTDIR)/etc/modules-load.d/memtrack.conf
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# The tools in bin, the daemon in sbin (it is started by root or systemd),
# memtrack-leak's in-process engine where the installed memtrack-leak looks
# for it, man pages and bash completions.
install-user: user man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR)
	install -m 0755 $(addprefix $(BIN)/,$(TOOLS)) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BIN)/memtrackd $(DESTDIR)$(SBINDIR)/
	install -D -m 0644 build/lib/libmemtrack-preload.so \
		$(DESTDIR)$(LIBDIR)/libmemtrack-preload.so
	@set -e; for m in $(MANS); do \
		n=$${m##*/}; \
		install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${n##*.}/$$n; \
	done
	install -d $(DESTDIR)$(COMPLETIONSDIR)
	install -m 0644 $(addprefix completions/bash/,$(TOOLS) memtrackd) \
		$(DESTDIR)$(COMPLETIONSDIR)/
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -D -m 0644 packaging/grafana-dashboard.json \
		$(DESTDIR)$(DOCDIR)/grafana-dashboard.json

# memtrackd: systemd units and a config (an existing one is kept).
install-memtrackd:
	install -d $(DESTDIR)$(UNITDIR)
	@set -e; for u in $(UNITS); do \
		echo "install packaging/$$u $(DESTDIR)$(UNITDIR)/$$u"; \
		sed -e 's|@SBINDIR@|$(SBINDIR)|' -e 's|@DOCDIR@|$(DOCDIR)|' \
			-e 's|@MANDIR@|$(MANDIR)|' \
			packaging/$$u >$(DESTDIR)$(UNITDIR)/$$u; \
	done
	@if [ ! -e $(DESTDIR)/etc/memtrack/memtrackd.conf ]; then \
		install -D -m 0644 packaging/memtrackd.conf \
			$(DESTDIR)/etc/memtrack/memtrackd.conf; fi

# What dkms needs to build the module, and nothing of build/: the module's
# sources, this Makefile and the scripts it calls, dkms.conf (its version
# is VERSION's).
DKMS_FILES := Kbuild Makefile VERSION dkms.conf $(KMOD_FILES) \
	$(wildcard include/uapi/linux/*.h) $(wildcard kmod/features/*.c) \
	kmod/features/detect kmod/features/exports scripts/kernel-release \
	scripts/inroot

dkms-source:
	@rm -rf $(DKMS_SRC)/memtrack-$(VERSION)
	install -d $(DKMS_SRC)/memtrack-$(VERSION)
	cp --parents -t $(DKMS_SRC)/memtrack-$(VERSION) $(DKMS_FILES)
	sed -i 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' \
		$(DKMS_SRC)/memtrack-$(VERSION)/dkms.conf

install-dkms: dkms-source
	@if [ -z "$(DESTDIR)" ]; then dkms add -m memtrack -v $(VERSION); fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS)) \
		$(DESTDIR)$(SBINDIR)/memtrackd \
		$(DESTDIR)$(LIBDIR)/libmemtrack-preload.so \
		$(addprefix $(DESTDIR)$(COMPLETIONSDIR)/,$(TOOLS) memtrackd) \
		$(DESTDIR)$(DOCDIR)/README.md \
		$(DESTDIR)$(DOCDIR)/grafana-dashboard.json \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) \
		$(DESTDIR)/etc/udev/rules.d/99-memtrack.rules \
		$(DESTDIR)/etc/modules-load.d/memtrack.conf \
		$(DESTDIR)/lib/modules/$(KVER)/extra/memtrack.ko
	@set -e; for m in $(MANS); do \
		n=$${m##*/}; rm -f $(DESTDIR)$(MANDIR)/man$${n##*.}/$$n; \
	done
	@if cmp -s packaging/memtrackd.conf $(DESTDIR)/etc/memtrack/memtrackd.conf; then \
		rm -f $(DESTDIR)/etc/memtrack/memtrackd.conf; fi
	@rmdir $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)/etc/memtrack 2>/dev/null || true
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

clean:
	rm -rf build
