# SPDX-License-Identifier: GPL-2.0
#
# ext4dec top-level Makefile.
#
#   make              build the szip tool (and the module, see Kbuild)
#   make check        install what the tests need, then run every test
#   make clean        remove build products
#
# Userspace objects are built three ways: the release tool in tools/szip/,
# a sanitized (ASan/UBSan) copy for the tests in build/san/, and the
# libFuzzer target in build/fuzz/.

CC	?= cc
CLANG	?= clang
FUZZ_SECONDS ?= 60

WARN	:= -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wno-missing-field-initializers
INCS	:= -Iinclude -Iszip -Itools/szip
CFLAGS	?= -O2 -g
USER_CFLAGS := -std=gnu11 $(WARN) $(INCS) $(CFLAGS)
SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer
LIBS	:= -ldeflate -lz

SZIP_SRCS := szip/header.c szip/decode.c szip/bcj.c
TOOL_SRCS := tools/szip/main.c tools/szip/pack.c
UNIT_SRCS := tests/unit/test_szip.c tools/szip/pack.c
FUZZ_SRCS := tests/fuzz/fuzz_decode.c
HDRS	  := $(wildcard include/*.h szip/*.h tools/szip/*.h tests/unit/*.h)

TOOL	  := tools/szip/szip
SAN_TOOL  := build/san/szip
UNIT	  := build/san/test_szip
FUZZ	  := build/fuzz/fuzz_decode

.PHONY: all tool check check-host deps test-unit test-cli test-fuzz fuzz clean

all: tool

tool: $(TOOL)

$(TOOL): $(SZIP_SRCS) $(TOOL_SRCS) $(HDRS)
	$(CC) $(USER_CFLAGS) -o $@ $(SZIP_SRCS) $(TOOL_SRCS) $(LIBS)

$(SAN_TOOL): $(SZIP_SRCS) $(TOOL_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN) -o $@ $(SZIP_SRCS) $(TOOL_SRCS) $(LIBS)

$(UNIT): $(SZIP_SRCS) $(UNIT_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN) -o $@ $(SZIP_SRCS) $(UNIT_SRCS) $(LIBS)

$(FUZZ): $(SZIP_SRCS) $(FUZZ_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(USER_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $(SZIP_SRCS) $(FUZZ_SRCS) -lz

deps:
	scripts/install-deps.sh host

# The one test command (README, .ci/run).
check: deps
	$(MAKE) all
	$(MAKE) $(SAN_TOOL) $(UNIT) $(FUZZ)
	tests/run-host.sh --fuzz-seconds=$(FUZZ_SECONDS)

# A longer fuzzing session that grows tests/fuzz/corpus.
fuzz: $(FUZZ)
	mkdir -p build/fuzz/new tests/fuzz/corpus
	$(FUZZ) -max_total_time=$${FUZZ_SECONDS:-600} -print_final_stats=1 \
		build/fuzz/new tests/fuzz/corpus
	$(FUZZ) -merge=1 tests/fuzz/corpus build/fuzz/new

clean:
	rm -rf build $(TOOL)
