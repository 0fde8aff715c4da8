// SPDX-License-Identifier: GPL-2.0
/*
 * Who may have the kernel decode a file, and refusals remembered.
 *
 * The activation policy.  Activating a file makes the kernel parse bytes
 * that whoever could write the file chose.  By default ext4dec activates
 * a +c file only if nobody but root, and the members of the trusted group
 * if there is one, can have written it: the file is owned by root or by
 * the trusted group, others may not write it, and its group may write it
 * only if that group is root's or the trusted one.  ACL entries that let
 * someone write show in the group bits (the ACL mask).  Owners count in
 * the initial user namespace: a container's root is not root.  The
 * any_owner parameter trusts every owner.  A file refused by the policy
 * reads as its raw bytes; chattr +c on it fails with EPERM.
 *
 * Refusals remembered.  A refusal that stays true until the file or the
 * policy changes (not szip, a kind of file ext4dec cannot serve, an owner
 * not trusted) is kept in the inactive inode's @i_private, as a word with
 * bit 0 set, never a pointer (ext4dec_state() tells them apart): the
 * refusal's errno and a fingerprint of what any change of the file
 * changes (ctime, i_version, size, owner, mode) and of the policy.  While
 * the fingerprint holds, opens and stats do not try again; a write, a
 * chattr, chown or chmod, or a change of a policy parameter makes the next
 * one check again.  The word owns nothing: eviction and unload leave it,
 * and the fingerprint's key is new at each module load, so a word left by
 * an earlier load does not match.
 */
#include "ext4dec.h"

#include <linux/iversion.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/siphash.h>

static bool ext4dec_any_owner;
static int ext4dec_trusted_gid = -1;

/* Bumped by every change of a policy parameter: in every fingerprint */
static atomic_t ext4dec_policy_gen = ATOMIC_INIT(0);
static siphash_key_t ext4dec_fp_key;

static int ext4dec_any_owner_set(const char *val, const struct kernel_param *kp)
{
	int err = param_set_bool(val, kp);

	if (!err)
		atomic_inc(&ext4dec_policy_gen);
	return err;
}

static const struct kernel_param_ops ext4dec_any_owner_ops = {
	.set = ext4dec_any_owner_set,
	.get = param_get_bool,
};

module_param_cb(any_owner, &ext4dec_any_owner_ops, &ext4dec_any_owner, 0644);
MODULE_PARM_DESC(any_owner,
		 "Activate +c files whoever owns and may write them (default: only files no one but root and trusted_gid can have written)");

static int ext4dec_trusted_gid_set(const char *val, const struct kernel_param *kp)
{
	int gid, err;

	err = kstrtoint(val, 0, &gid);
	if (err)
		return err;
	if (gid < -1)
		return -EINVAL;
	WRITE_ONCE(ext4dec_trusted_gid, gid);
	atomic_inc(&ext4dec_policy_gen);
	return 0;
}

static const struct kernel_param_ops ext4dec_trusted_gid_ops = {
	.set = ext4dec_trusted_gid_set,
	.get = param_get_int,
};

module_param_cb(trusted_gid, &ext4dec_trusted_gid_ops, &ext4dec_trusted_gid, 0644);
MODULE_PARM_DESC(trusted_gid,
		 "A group whose files are trusted like root's (default -1: none)");

/* Whether @gid is the trusted group */
static bool ext4dec_gid_trusted(kgid_t gid)
{
	int trusted = READ_ONCE(ext4dec_trusted_gid);

	return trusted >= 0 && gid_eq(gid, KGIDT_INIT((gid_t)trusted));
}

/**
 * ext4dec_trusted() - whether the activation policy lets @inode be decoded
 * @inode: an ext4 regular file
 *
 * Return: true if only root and the trusted group can have written the
 * file, or any_owner is set.
 */
bool ext4dec_trusted(const struct inode *inode)
{
	umode_t mode = READ_ONCE(inode->i_mode);
	kgid_t gid = inode->i_gid;

	if (READ_ONCE(ext4dec_any_owner))
		return true;
	if (!uid_eq(inode->i_uid, GLOBAL_ROOT_UID) && !ext4dec_gid_trusted(gid))
		return false;
	if (mode & 0002)	/* others may write */
		return false;
	/* the group may write: root's or the trusted one only */
	return !(mode & 0020) || gid_eq(gid, GLOBAL_ROOT_GID) ||
	       ext4dec_gid_trusted(gid);
}

/*
 * The word in @i_private: bit 0 set, the errno in bits 1-8, the
 * fingerprint in the others.
 */
#define EXT4DEC_REFUSAL_ERRNO_SHIFT	1
#define EXT4DEC_REFUSAL_FP_MASK		(~0UL << 9)

/**
 * ext4dec_fingerprint() - what a change of @inode or of the policy changes
 * @inode: an ext4 inode
 *
 * Marks @inode's i_version as seen, so that its next change increments
 * it even within the ctime's granularity.
 *
 * Return: a hash of ctime, i_version, size, owner, mode and policy.
 */
unsigned long ext4dec_fingerprint(struct inode *inode)
{
	struct timespec64 ctime = inode_get_ctime(inode);
	u64 v[6] = {
		ctime.tv_sec,
		(u64)ctime.tv_nsec << 32 | READ_ONCE(inode->i_mode),
		inode_query_iversion(inode),
		i_size_read(inode),
		(u64)__kuid_val(inode->i_uid) << 32 | __kgid_val(inode->i_gid),
		atomic_read(&ext4dec_policy_gen),
	};

	return siphash(v, sizeof(v), &ext4dec_fp_key) & EXT4DEC_REFUSAL_FP_MASK;
}

/**
 * ext4dec_refusal_lasts() - whether a refusal holds until the file changes
 * @err: the errno of ext4dec_activate()
 *
 * Return: true for not szip (-EINVAL), a kind of file or szip file that
 * cannot be served (-EOPNOTSUPP) and an owner not trusted (-EPERM); false
 * for writers, mappings, I/O errors and lack of memory, which pass.
 */
bool ext4dec_refusal_lasts(int err)
{
	return err == -EINVAL || err == -EOPNOTSUPP || err == -EPERM;
}

/**
 * ext4dec_refusal_word() - the word that remembers a refusal
 * @err: a negative errno for which ext4dec_refusal_lasts()
 * @fp: ext4dec_fingerprint() of the inode before the checks
 *
 * Return: the word, for @i_private.
 */
unsigned long ext4dec_refusal_word(int err, unsigned long fp)
{
	return fp | (unsigned long)(-err & 0xff) << EXT4DEC_REFUSAL_ERRNO_SHIFT |
	       EXT4DEC_REFUSAL_TAG;
}

/**
 * ext4dec_refusal_remembered() - whether @inode was refused and has not
 *	changed since
 * @inode: an ext4 inode
 *
 * Context: any; no lock needed: a stale answer only costs or saves one
 * check.
 * Return: the errno of the refusal (negative), or 0.
 */
int ext4dec_refusal_remembered(struct inode *inode)
{
	unsigned long word = (unsigned long)READ_ONCE(inode->i_private);

	if (!(word & EXT4DEC_REFUSAL_TAG) ||
	    (word & EXT4DEC_REFUSAL_FP_MASK) != ext4dec_fingerprint(inode))
		return 0;
	return -(int)((word >> EXT4DEC_REFUSAL_ERRNO_SHIFT) & 0xff);
}

/**
 * ext4dec_policy_init() - key the fingerprints of this load
 */
void ext4dec_policy_init(void)
{
	get_random_bytes(&ext4dec_fp_key, sizeof(ext4dec_fp_key));
}
