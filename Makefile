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
#   make install          module, tools, udev rule, modules-load snippet
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

KMOD_FILES := $(wildcard kmod/*.c kmod/*.h)
KMOD_DEPS := Kbuild VERSION $(KMOD_FILES) $(wildcard include/uapi/linux/*.h) \
	$(wildcard kmod/features/*.c) kmod/features/detect kmod/features/exports

BIN := build/bin

DESTDIR ?=
PREFIX ?= /usr/local

.PHONY: all module user progs leak-progs check run install install-memtrackd clean FORCE

all: module user progs

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
		$(KRUN) kmod/features/detect $(KDIR) $(KOBJ); fi
	$(KRUN) $(MAKE) -C $(KDIR) M=$(KOBJ) modules
	@cp $(KOBJ)/memtrack.ko $@

user:
	@if [ -f user/Makefile ]; then $(MAKE) -C user TOP=$(TOP) BIN=$(TOP)/$(BIN); fi

# The workloads and leak fixtures the tests drive: tests/Makefile.
progs leak-progs:
	@$(MAKE) --no-print-directory -C tests TOP=$(TOP) $@

# SUITE=name(s) [TEST=name(s)] [KERNEL=series]: one suite, one test, one
# kernel (scripts/check says how).
check:
	@SUITE="$(SUITE)" TEST="$(TEST)" KERNEL="$(KERNEL)" scripts/check

run:
	@scripts/run-demo

install: module user
	install -D -m 0644 build/$(KVER)/memtrack.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/memtrack.ko
	install -D -m 0644 packaging/99-memtrack.rules \
		$(DESTDIR)/etc/udev/rules.d/99-memtrack.rules
	install -D -m 0644 packaging/memtrack.conf \
		$(DESTDIR)/etc/modules-load.d/memtrack.conf
	@if [ -d $(BIN) ] && [ -n "$$(ls $(BIN))" ]; then \
		install -d $(DESTDIR)$(PREFIX)/bin && \
		install -m 0755 $(BIN)/* $(DESTDIR)$(PREFIX)/bin/; fi
	install -D -m 0644 build/lib/libmemtrack-preload.so \
		$(DESTDIR)$(PREFIX)/lib/memtrack/libmemtrack-preload.so
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi
	@$(MAKE) --no-print-directory install-memtrackd

# memtrackd: systemd unit and a config (an existing one is kept).
install-memtrackd:
	install -d $(DESTDIR)/lib/systemd/system
	sed -e 's|@BINDIR@|$(PREFIX)/bin|' -e 's|@DOCDIR@|$(PREFIX)/share/doc/memtrack|' \
		packaging/memtrackd.service >$(DESTDIR)/lib/systemd/system/memtrackd.service
	sed -e 's|@BINDIR@|$(PREFIX)/bin|' -e 's|@DOCDIR@|$(PREFIX)/share/doc/memtrack|' \
		packaging/memtrackd-aggregate.service \
		>$(DESTDIR)/lib/systemd/system/memtrackd-aggregate.service
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/memtrack/README.md
	@if [ ! -e $(DESTDIR)/etc/memtrack/memtrackd.conf ]; then \
		install -D -m 0644 packaging/memtrackd.conf \
			$(DESTDIR)/etc/memtrack/memtrackd.conf; fi

clean:
	rm -rf build
