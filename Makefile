# SPDX-License-Identifier: GPL-2.0
#
# ext4dec top-level Makefile.
#
#   make              build the szip tool and ext4dec-status's helper
#                     (ext4dec-query), and ext4dec.ko against KDIR
#   make check        install what the tests need, then run every test
#                     suite (what CI runs): host suites, kernel lint, the
#                     selftests, stress and the libxul check in QEMU on
#                     the kernel lines of tests/kernels (Debian's 6.1,
#                     6.12 and newest cloud kernels) and on a debug
#                     (KASAN, lockdep, KFENCE,
#                     UBSAN) kernel built from Debian's linux-source of the
#                     newest line, 7.3 (DEBUG_KERNELS= skips it,
#                     DEBUG_KERNELS=debug-6.1 takes 6.1's), stress cut
#                     down on it
#   make check-full   the same suites whole: stress uncut on every kernel,
#                     longer fuzzing, the whole Firefox demo, the boot
#                     test (README)
#   make demo         Firefox headless in a VM from a compressed libxul.so
#                     (DEMO_KERNEL; builds the Debian image once, cached)
#   make demo-libc    a VM with a compressed libc.so.6 in use (one minute)
#   make bench        the benchmark: ext4dec against ext4, SquashFS, EROFS
#                     and btrfs in QEMU, on 6.12 and the newest kernel line
#                     (README; BENCH_KERNELS, BENCH_QUICK=1, BENCH_ARGS)
#   make bench-overhead  what the module costs plain files, a cold stat
#                     of the largest tables, the memory of an active inode
#                     (OVERHEAD_KERNELS)
#   make install      szip, the ext4dec-* scripts, the man pages, and the
#                     module if KDIR exists, loaded at boot (README
#                     "Install"; install-tools, install-module, install-dkms)
#   make clean        remove build products
#
# KDIR is the kernel build tree for the module (default: the running
# kernel's); make check builds the module for each test kernel itself.
#
# Userspace objects are built three ways: the release tool in tools/szip/,
# a sanitized (ASan/UBSan) copy for the tests in build/san/, and the
# libFuzzer target in build/fuzz/.

KVER	?= $(shell uname -r)
KDIR	?= /lib/modules/$(KVER)/build
PREFIX	?= /usr/local
LIBEXECDIR ?= $(PREFIX)/libexec
DESTDIR	?=
VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
MODULE_SRCS := Kbuild dkms.conf include szip ext4dec
CC	?= cc
CLANG	?= clang
# the kernel lines of tests/kernels marked "check" (KERNELS="6.12 newest" picks others)
KERNELS	?= $(shell tests/lib/kernels.sh)
DEBUG_KERNELS ?= debug
FUZZ_SECONDS ?=

WARN	:= -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wno-missing-field-initializers
INCS	:= -Iinclude -Iszip -Itools/szip
CFLAGS	?= -O2 -g
USER_CFLAGS := -std=gnu11 $(WARN) $(INCS) $(CFLAGS)
SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer
LIBS	:= -ldeflate -lz -lzstd -llz4 -lxxhash -pthread

SZIP_SRCS := szip/header.c szip/decode.c szip/bcj.c
TOOL_SRCS := tools/szip/main.c tools/szip/cmd_compress.c \
	     tools/szip/cmd_decompress.c tools/szip/cmd_list.c \
	     tools/szip/utils.c tools/szip/options.c tools/szip/pack.c
UNIT_SRCS := tests/unit/test_szip.c tools/szip/pack.c tools/szip/options.c
FUZZ_SRCS := tests/fuzz/fuzz_decode.c
HDRS	  := $(wildcard include/*.h szip/*.h tools/szip/*.h tests/unit/*.h)

TOOL	  := tools/szip/szip
SAN_TOOL  := build/san/szip
QUERY	  := tools/ext4dec-query/ext4dec-query
SAN_QUERY := build/san/ext4dec-query
QUERY_SRCS := tools/ext4dec-query/ext4dec-query.c include/ext4dec_ioctl.h \
	      include/szip_format.h
UNIT	  := build/san/test_szip
FUZZ	  := build/fuzz/fuzz_decode
SELFTEST  := build/selftests/ext4dec_test
IOCTL32   := build/selftests/ext4dec_ioctl32
DEMO_HELPER := build/demo/ext4dec_demo
XATTRS	  := tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs

.PHONY: all tool module check check-full test-programs deps debug-kernel fuzz demo \
	demo-libc clean install uninstall install-tools uninstall-tools \
	install-module uninstall-module install-dkms uninstall-dkms

all: tool module

tool: $(TOOL) $(QUERY)

module:
	@if [ -f "$(KDIR)/Makefile" ]; then \
		$(MAKE) -C "$(KDIR)" M="$(CURDIR)" modules; \
	else \
		echo "module: no kernel build tree at $(KDIR): set KDIR to build ext4dec.ko"; \
	fi

$(TOOL): $(SZIP_SRCS) $(TOOL_SRCS) $(HDRS)
	$(CC) $(USER_CFLAGS) -o $@ $(SZIP_SRCS) $(TOOL_SRCS) $(LIBS)

$(SAN_TOOL): $(SZIP_SRCS) $(TOOL_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN) -o $@ $(SZIP_SRCS) $(TOOL_SRCS) $(LIBS)

# ext4dec-status's helper: EXT4DEC_IOC_GET_STATUS on each file
$(QUERY): $(QUERY_SRCS)
	$(CC) $(USER_CFLAGS) -DEXT4DEC_VERSION='"$(VERSION)"' -o $@ $<

$(SAN_QUERY): $(QUERY_SRCS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN) -DEXT4DEC_VERSION='"$(VERSION)"' -o $@ $<

$(UNIT): $(SZIP_SRCS) $(UNIT_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN) -o $@ $(SZIP_SRCS) $(UNIT_SRCS) $(LIBS)

$(FUZZ): $(SZIP_SRCS) $(FUZZ_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(USER_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(SZIP_SRCS) $(FUZZ_SRCS) -lz -lzstd -llz4 -lxxhash

# ext4dec-compress's helper: a file's extended attributes onto its
# replacement (ACLs, SELinux label), where getfattr/setfattr may be missing
tool: $(XATTRS)
$(XATTRS): tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs.c
	$(CC) $(USER_CFLAGS) -o $@ $<

# Install (README "Install"; DESTDIR stages a package):
#   install        the tools, then the module: without a kernel build tree at
#                  KDIR the module is skipped with a warning, and the exit
#                  status is still 0 (the tools are installed)
#   install-tools  szip, the ext4dec-* scripts and the man pages under PREFIX,
#                  and the helpers of ext4dec-compress and ext4dec-status
#                  in LIBEXECDIR/ext4dec
#   install-module ext4dec.ko for KVER (built against KDIR) in
#                  /lib/modules/KVER/extra, depmod, and MODULES_LOAD, which
#                  has systemd load it at boot; fails without KDIR
#   install-dkms   the sources in /usr/src/ext4dec-VERSION for dkms, and
#                  MODULES_LOAD
MODULES_LOAD := /usr/lib/modules-load.d/ext4dec.conf
# the scripts look for their helpers at ../libexec/ext4dec/ beside themselves
HELPERDIR := $(LIBEXECDIR)/ext4dec
# depmod, when the modules of KVER are there (not for a kernel never installed)
DEPMOD	= if [ -d "$(DESTDIR)/lib/modules/$(KVER)" ]; then \
		depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER); fi

install: install-tools
	@if [ -f "$(KDIR)/Makefile" ]; then \
		$(MAKE) --no-print-directory install-module; \
	else \
		echo "install: WARNING: ext4dec.ko skipped: no kernel build tree at $(KDIR)" >&2; \
		echo "install:   (linux-headers-$(KVER) not installed?); the tools and man pages are installed." >&2; \
		echo "install:   For the module: make install-module KDIR=<build tree> KVER=<version>," >&2; \
		echo "install:   or DKMS, which also rebuilds it for each new kernel: make install-dkms (README \"Install\")" >&2; \
	fi

install-tools: tool
	install -D -m 0755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/szip
	install -D -m 0755 $(QUERY) $(DESTDIR)$(HELPERDIR)/ext4dec-query
	install -D -m 0644 man/szip.1 $(DESTDIR)$(PREFIX)/share/man/man1/szip.1
	install -D -m 0644 man/ext4dec.8 $(DESTDIR)$(PREFIX)/share/man/man8/ext4dec.8
	install -D -m 0644 man/ext4dec-compress.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/ext4dec-compress.8
	for m in ext4dec-decompress ext4dec-status; do \
		echo '.so man8/ext4dec-compress.8' >$(DESTDIR)$(PREFIX)/share/man/man8/$$m.8; \
	done
	install -D -m 0755 scripts/ext4dec-compress $(DESTDIR)$(PREFIX)/sbin/ext4dec-compress
	ln -sf ext4dec-compress $(DESTDIR)$(PREFIX)/sbin/ext4dec-decompress
	ln -sf ext4dec-compress $(DESTDIR)$(PREFIX)/sbin/ext4dec-status
	install -D -m 0755 $(XATTRS) $(DESTDIR)$(HELPERDIR)/ext4dec-copy-xattrs

install-module:
	@test -f "$(KDIR)/Makefile" || \
		{ echo "install-module: no kernel build tree at $(KDIR): set KDIR (and KVER)" >&2; exit 1; }
	$(MAKE) -C "$(KDIR)" M="$(CURDIR)" modules
	install -D -m 0644 ext4dec.ko $(DESTDIR)/lib/modules/$(KVER)/extra/ext4dec.ko
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)
	$(install-modules-load)

define install-modules-load
	install -d $(DESTDIR)$(dir $(MODULES_LOAD))
	echo ext4dec >$(DESTDIR)$(MODULES_LOAD)
endef

uninstall: uninstall-tools uninstall-module

uninstall-tools:
	rm -f $(DESTDIR)$(PREFIX)/bin/szip \
		$(DESTDIR)$(PREFIX)/share/man/man1/szip.1 \
		$(DESTDIR)$(PREFIX)/share/man/man8/ext4dec.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/ext4dec-compress.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/ext4dec-decompress.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/ext4dec-status.8 \
		$(DESTDIR)$(PREFIX)/sbin/ext4dec-compress \
		$(DESTDIR)$(PREFIX)/sbin/ext4dec-decompress \
		$(DESTDIR)$(PREFIX)/sbin/ext4dec-status \
		$(DESTDIR)$(HELPERDIR)/ext4dec-copy-xattrs \
		$(DESTDIR)$(HELPERDIR)/ext4dec-query
	[ ! -d $(DESTDIR)$(HELPERDIR) ] || rmdir $(DESTDIR)$(HELPERDIR)

uninstall-module:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/ext4dec.ko $(DESTDIR)$(MODULES_LOAD)
	@$(DEPMOD)

# Sources for DKMS: then dkms add/build/install -m ext4dec -v $(VERSION)
# (dkms.conf: AUTOINSTALL, so the kernel's postinst hook builds it for
# each new kernel); the module loads at boot through MODULES_LOAD.
install-dkms:
	mkdir -p $(DESTDIR)/usr/src/ext4dec-$(VERSION)
	cp -r $(MODULE_SRCS) $(DESTDIR)/usr/src/ext4dec-$(VERSION)/
	$(install-modules-load)

# After dkms remove ext4dec/$(VERSION) --all
uninstall-dkms:
	rm -rf $(DESTDIR)/usr/src/ext4dec-$(VERSION)
	rm -f $(DESTDIR)$(MODULES_LOAD)

# Runs inside the test VM: plain build (the guest has no sanitizer runtime).
# The kernel's kselftest harness is not part of the project: its two
# headers are copied from Debian's linux-source at build time
# (scripts/kernel-files.sh, cached, as for checkpatch.pl), and included as
# system headers, as their code is not -Wextra clean; its FIXTURE_SETUP()
# and FIXTURE_TEARDOWN() define functions without a prototype.
KSFT_DIR  := build/kselftest
$(SELFTEST): tests/selftests/ext4dec_test.c tests/lib/testlib.h include/ext4dec_ioctl.h \
		$(KSFT_DIR)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -Wno-missing-prototypes -isystem $(KSFT_DIR) \
		-o $@ $<

# A 32-bit program with no C library (none is needed for -m32 here), for
# the compat ioctl path.
$(IOCTL32): tests/selftests/ioctl32.c
	@mkdir -p $(@D)
	$(CC) -m32 -Os -nostdlib -static -ffreestanding -fno-pic -fno-stack-protector \
		$(WARN) -Wno-missing-prototypes -o $@ $<

$(KSFT_DIR)/kselftest_harness.h:
	scripts/kernel-files.sh --selftest $(@D) >/dev/null

deps:
	scripts/install-deps.sh host
	scripts/install-vm-deps.sh $(KERNELS)

# The debug kernels of the VM lane, "debug" or "debug-<series>" (cached;
# 580 s of CPU for 6.1, 760 s for 7.3, with -j2).
debug-kernel:
	@for k in $(DEBUG_KERNELS); do \
		s=$${k#debug}; s=$${s#-}; \
		scripts/build-debug-kernel.sh $${s:+--series $$s} || exit 1; \
	done

# The test command (README, .ci/run), and its whole tier.
RUN_TESTS = tests/run-tests.sh $(if $(FUZZ_SECONDS),--fuzz-seconds=$(FUZZ_SECONDS)) \
	--kernels="$(KERNELS)" --debug-kernels="$(DEBUG_KERNELS)"

test-programs: deps debug-kernel
	$(MAKE) all
	$(MAKE) $(SAN_TOOL) $(SAN_QUERY) $(UNIT) $(FUZZ) $(SELFTEST) $(IOCTL32) $(DEMO_HELPER)

check: test-programs
	$(RUN_TESTS) --tier=check

check-full: test-programs
	$(RUN_TESTS) --tier=full

# The Firefox demo's helper (mmap checksum, PNG comparison), run in the
# VM: plain build, like the selftests.
$(DEMO_HELPER): tests/vm/demo-helper.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $< -lz

# Boot a VM with a Debian image (scripts/build-demo-image.sh, cached),
# convert Firefox's libxul.so in place, compare headless screenshots taken
# before and after, check checksums, print sizes, times and counters
# (DEMO_KERNEL=6.1 for the other kernel).
DEMO_KERNEL ?= 6.12
demo: deps tool $(DEMO_HELPER)
	tests/vm/firefox-demo.sh -k $(DEMO_KERNEL)

# The first demo: compress the guest's libc.so.6, run a program against it.
demo-libc: deps tool
	rm -rf build/module-src && mkdir -p build/module-src
	cp -r $(MODULE_SRCS) build/module-src/
	tests/vm/run-vm.sh -k $(DEMO_KERNEL) -p tests/vm/payloads/demo \
		--module-src build/module-src --bin tools/szip/szip

# The benchmark (README "Benchmark", bench/run-bench.sh --help): installs
# what it needs, boots each of BENCH_KERNELS with one throttled virtio disk
# per configuration, prints the tables; results in build/bench/.
BENCH_KERNELS ?= 6.12 newest
.PHONY: bench
bench:
	scripts/install-deps.sh host
	scripts/install-vm-deps.sh $(BENCH_KERNELS)
	BENCH_KERNELS="$(BENCH_KERNELS)" \
	BENCH_COMMAND="make bench$(if $(filter command line environment,$(origin BENCH_KERNELS)), BENCH_KERNELS='$(BENCH_KERNELS)')$(if $(BENCH_QUICK), BENCH_QUICK=$(BENCH_QUICK))$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
		bench/run-bench.sh $(BENCH_ARGS)

# What loading the module costs files that are not compressed, a cold stat
# of a file with the largest tables, and the memory an active inode holds
# (bench/overhead.sh; default: the newest check line, OVERHEAD_KERNELS to
# choose).
OVERHEAD_KERNELS ?= $(lastword $(KERNELS))
.PHONY: bench-overhead
bench-overhead:
	scripts/install-deps.sh host
	scripts/install-vm-deps.sh $(OVERHEAD_KERNELS)
	bench/overhead.sh $(OVERHEAD_KERNELS)

# A longer fuzzing session that grows tests/fuzz/corpus.
fuzz: $(FUZZ)
	mkdir -p build/fuzz/new tests/fuzz/corpus
	$(FUZZ) -max_total_time=$${FUZZ_SECONDS:-600} -print_final_stats=1 \
		build/fuzz/new tests/fuzz/corpus
	$(FUZZ) -merge=1 tests/fuzz/corpus build/fuzz/new

clean:
	rm -rf build $(TOOL) $(QUERY) $(XATTRS)
	rm -f ext4dec.ko ext4dec.mod ext4dec.mod.c ext4dec.o modules.order \
		Module.symvers .*.cmd ext4dec/*.o ext4dec/.*.cmd szip/*.o \
		szip/.*.cmd .ext4dec*
