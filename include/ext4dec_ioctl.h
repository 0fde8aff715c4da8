/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ext4dec's ioctl: what the module makes of an ext4 file, for anyone who
 * can open it.  Shared by the kernel module and the userspace tools.
 *
 *   struct ext4dec_status st;
 *   int fd = open("libxul.so", O_RDONLY);
 *   ioctl(fd, EXT4DEC_IOC_GET_STATUS, &st);
 *
 * Without the module loaded, ext4 answers ENOTTY.
 */
#ifndef _EXT4DEC_IOCTL_H
#define _EXT4DEC_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * struct ext4dec_status.state: PLAIN, not +c (ext4's own file); INACTIVE,
 * +c and read raw (not tried since the module loaded, or refused for a
 * reason that passes: writers, a mapping, I/O, memory); ACTIVE, served
 * decompressed; REFUSED, +c and read raw until the file changes (see
 * @refusal).
 */
#define EXT4DEC_STATE_PLAIN	0
#define EXT4DEC_STATE_INACTIVE	1
#define EXT4DEC_STATE_ACTIVE	2
#define EXT4DEC_STATE_REFUSED	3

/**
 * struct ext4dec_status - the answer of EXT4DEC_IOC_GET_STATUS
 * @state: EXT4DEC_STATE_*
 * @refusal: for EXT4DEC_STATE_REFUSED, the errno of the refusal: EINVAL
 *	not an szip file, EOPNOTSUPP a kind of file or szip file the
 *	module cannot serve (encrypted, verity, DAX, inline data, data
 *	journalling, a codec or dictionary this kernel cannot decode), EPERM
 *	an owner the activation policy does not trust; else 0
 * @format: szip format, 1 or 2 (active files; else 0, as below)
 * @codec: SZIP_CODEC_* (include/szip_format.h)
 * @chunk_size: uncompressed bytes per chunk
 * @nr_chunks: number of chunks
 * @size: uncompressed size
 * @raw_size: size of the szip file on disk
 * @chunks_inflated: chunks this file inflated since it was activated
 * @reserved: zero
 */
struct ext4dec_status {
	__u32 state;
	__u32 refusal;
	__u32 format;
	__u32 codec;
	__u32 chunk_size;
	__u32 nr_chunks;
	__u64 size;
	__u64 raw_size;
	__u64 chunks_inflated;
	__u64 reserved[4];
};

#define EXT4DEC_IOC_GET_STATUS	_IOR(0xE4, 0, struct ext4dec_status)

#endif /* _EXT4DEC_IOCTL_H */
