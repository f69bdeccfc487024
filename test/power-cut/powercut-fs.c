/*
 * powercut-fs: a FUSE file system for power-cut tests. It passes every call through to a backing
 * directory and remembers, for each file, what its writes since its last fsync/fdatasync replaced,
 * and which names were made since their directory's last fsync. Writing `drop` to the control file
 * `.powercut` at the mount's root undoes all of that at once, as a power cut would: each file
 * goes back to its contents and size at its last sync, and each unsynced new name disappears.
 * Writing `sync` makes everything durable (a baseline); reading the file gives the counters.
 *
 * What is durable when (docs/development.md, "Power-cut test"):
 *   - file contents and size (write, truncate, O_TRUNC, fallocate): at fsync or fdatasync of the
 *     file through any descriptor (the file's, not the descriptor's: as the kernel does);
 *   - a new name (create, mknod, mkdir, symlink, link): at fsync of its directory;
 *   - unlink, rmdir, rename, chmod, chown, utimens: at once (a cut never brings a removed name
 *     back nor undoes a rename; a renamed file keeps its unsynced contents, which a cut undoes).
 *
 * Every file is opened direct_io (no kernel page cache: what a read returns after a cut is what
 * the backing file holds), except SQLite's `-shm` files, which SQLite maps with mmap (a direct_io
 * file cannot be mapped shared on this libfuse) and which SQLite never trusts after a crash: the
 * first connection to open the database truncates and rebuilds it from the WAL.
 *
 * Single-threaded (-s): a cut runs between two calls, never inside one.
 *
 * Usage: powercut-fs BACKING_DIR MOUNTPOINT   (stays in the foreground; SIGTERM unmounts)
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

#define PAGE 4096
#define CONTROL "/.powercut"
#define CONTROL_FH UINT64_MAX

static int root_fd = -1;

/* A file written since its last sync: the bytes of each page those writes changed, as they were
 * at the sync, and its size then. Found by the backing file's device and inode, so a rename or a
 * second descriptor reaches the same record. */
struct node {
  dev_t dev;
  ino_t ino;
  int fd; /* read-write on the backing file, held until the node is synced or dropped */
  off_t synced_size;
  size_t npages; /* pages below synced_size */
  char **saved;  /* saved[p]: page p at the sync, or NULL while unchanged */
  unsigned long long changed; /* bytes written or truncated away since the sync */
  struct node *next;
};

/* A name made since its directory's last fsync, newest first. */
struct name {
  char *path;
  struct name *next;
};

static struct node *nodes;
static struct name *names;

static struct {
  unsigned long drops, syncs;
  unsigned long last_files, last_pages, last_names;
  unsigned long long last_bytes;
} counters;

static const char *rel(const char *path) {
  while (*path == '/') path++;
  return *path ? path : ".";
}

static int is_control(const char *path) { return path && strcmp(path, CONTROL) == 0; }

static size_t page_len(const struct node *n, size_t p) {
  off_t left = n->synced_size - (off_t)p * PAGE;
  return left > PAGE ? PAGE : (size_t)left;
}

static struct node *find_node(int fd) {
  struct stat st;
  if (fstat(fd, &st) < 0) return NULL;
  for (struct node *n = nodes; n; n = n->next)
    if (n->dev == st.st_dev && n->ino == st.st_ino) return n;
  return NULL;
}

/* The node of the file behind fd, made at the first change since the file's last sync. */
static struct node *node_of(int fd, int *err) {
  struct stat st;
  if (fstat(fd, &st) < 0) {
    *err = -errno;
    return NULL;
  }
  for (struct node *n = nodes; n; n = n->next)
    if (n->dev == st.st_dev && n->ino == st.st_ino) return n;
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  int own = open(proc, O_RDWR | O_CLOEXEC);
  if (own < 0) {
    *err = -errno;
    return NULL;
  }
  struct node *n = calloc(1, sizeof *n);
  if (!n) {
    close(own);
    *err = -ENOMEM;
    return NULL;
  }
  n->dev = st.st_dev;
  n->ino = st.st_ino;
  n->fd = own;
  n->synced_size = st.st_size;
  n->npages = (size_t)((st.st_size + PAGE - 1) / PAGE);
  n->saved = n->npages ? calloc(n->npages, sizeof *n->saved) : NULL;
  if (n->npages && !n->saved) {
    close(own);
    free(n);
    *err = -ENOMEM;
    return NULL;
  }
  n->next = nodes;
  nodes = n;
  return n;
}

/* Keeps the synced bytes of every page in [off, off + len) before they are changed. The pages
 * not saved yet still hold what they held at the sync: every change comes through here first. */
static int save_range(struct node *n, off_t off, off_t len) {
  if (len <= 0 || off >= n->synced_size) return 0;
  size_t first = (size_t)(off / PAGE);
  size_t last = (size_t)((off + len - 1) / PAGE);
  if (last >= n->npages) last = n->npages - 1;
  for (size_t p = first; p <= last; p++) {
    if (n->saved[p]) continue;
    size_t want = page_len(n, p);
    char *copy = calloc(1, PAGE);
    if (!copy) return -ENOMEM;
    size_t got = 0;
    while (got < want) {
      ssize_t r = pread(n->fd, copy + got, want - got, (off_t)p * PAGE + (off_t)got);
      if (r < 0) {
        free(copy);
        return -errno;
      }
      if (r == 0) break; /* cannot happen (a shrink saves first); the rest reads as zeros */
      got += (size_t)r;
    }
    n->saved[p] = copy;
  }
  return 0;
}

static void free_node(struct node *n) {
  for (size_t p = 0; p < n->npages; p++) free(n->saved[p]);
  free(n->saved);
  close(n->fd);
  free(n);
}

static void unlink_node(struct node *gone) {
  for (struct node **at = &nodes; *at; at = &(*at)->next) {
    if (*at == gone) {
      *at = gone->next;
      return;
    }
  }
}

/* Puts the file back as it was at its last sync. */
static void restore_node(struct node *n) {
  for (size_t p = 0; p < n->npages; p++) {
    if (!n->saved[p]) continue;
    size_t len = page_len(n, p);
    if (pwrite(n->fd, n->saved[p], len, (off_t)p * PAGE) != (ssize_t)len)
      fprintf(stderr, "powercut-fs: restoring page %zu of inode %lu: %s\n", p,
              (unsigned long)n->ino, strerror(errno));
    counters.last_pages++;
  }
  if (ftruncate(n->fd, n->synced_size) < 0)
    fprintf(stderr, "powercut-fs: restoring the size of inode %lu: %s\n", (unsigned long)n->ino,
            strerror(errno));
}

static void remember_name(const char *path) {
  struct name *m = malloc(sizeof *m);
  char *copy = strdup(path);
  if (!m || !copy) {
    /* Without memory the name can only be taken as durable: say so, the test will show it. */
    fprintf(stderr, "powercut-fs: out of memory, %s counts as synced\n", path);
    free(m);
    free(copy);
    return;
  }
  m->path = copy;
  m->next = names;
  names = m;
}

/* Forgets the names `match` selects: they are durable now, or gone. */
static void forget_names(int (*match)(const char *name, const char *arg), const char *arg) {
  for (struct name **at = &names; *at;) {
    struct name *m = *at;
    if (match(m->path, arg)) {
      *at = m->next;
      free(m->path);
      free(m);
    } else {
      at = &m->next;
    }
  }
}

static int same_path(const char *name, const char *path) { return strcmp(name, path) == 0; }

static int same_or_below(const char *name, const char *path) {
  size_t len = strlen(path);
  return strncmp(name, path, len) == 0 && (name[len] == '\0' || name[len] == '/');
}

static int in_directory(const char *name, const char *dir) {
  const char *slash = strrchr(name, '/');
  size_t len = slash == name ? 1 : (size_t)(slash - name);
  return strlen(dir) == len && strncmp(name, dir, len) == 0;
}

static void sync_all(void) {
  while (nodes) {
    struct node *n = nodes;
    nodes = n->next;
    free_node(n);
  }
  while (names) {
    struct name *m = names;
    names = m->next;
    free(m->path);
    free(m);
  }
  counters.syncs++;
}

static void drop_all(void) {
  counters.last_files = counters.last_pages = counters.last_names = 0;
  counters.last_bytes = 0;
  while (nodes) {
    struct node *n = nodes;
    nodes = n->next;
    restore_node(n);
    counters.last_files++;
    counters.last_bytes += n->changed;
    free_node(n);
  }
  /* Newest first: a file made in a new directory goes before the directory. */
  while (names) {
    struct name *m = names;
    names = m->next;
    if (unlinkat(root_fd, rel(m->path), 0) == 0 ||
        ((errno == EISDIR || errno == EPERM) && unlinkat(root_fd, rel(m->path), AT_REMOVEDIR) == 0))
      counters.last_names++;
    else if (errno != ENOENT)
      fprintf(stderr, "powercut-fs: removing unsynced %s: %s\n", m->path, strerror(errno));
    free(m->path);
    free(m);
  }
  counters.drops++;
  fprintf(stderr, "powercut-fs: cut: %lu files (%llu bytes changed, %lu pages), %lu names\n",
          counters.last_files, counters.last_bytes, counters.last_pages, counters.last_names);
}

static int change_size(int fd, off_t size) {
  int err = 0;
  struct node *n = node_of(fd, &err);
  if (!n) return err;
  struct stat st;
  if (fstat(fd, &st) < 0) return -errno;
  if (size < st.st_size) {
    int saved = save_range(n, size, st.st_size - size);
    if (saved < 0) return saved;
  }
  if (ftruncate(fd, size) < 0) return -errno;
  n->changed += (unsigned long long)(size < st.st_size ? st.st_size - size : size - st.st_size);
  return 0;
}

static int writable(int flags) { return (flags & O_ACCMODE) != O_RDONLY; }

static void *pc_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  (void)conn;
  cfg->use_ino = 1;
  cfg->entry_timeout = 0;
  cfg->attr_timeout = 0;
  cfg->negative_timeout = 0;
  cfg->hard_remove = 1;
  cfg->nullpath_ok = 1;
  cfg->kernel_cache = 0;
  cfg->auto_cache = 0;
  return NULL;
}

static int pc_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  if (is_control(path) || (fi && fi->fh == CONTROL_FH)) {
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
    return 0;
  }
  if (fi) return fstat((int)fi->fh, st) < 0 ? -errno : 0;
  if (!path) return -ENOENT;
  return fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int pc_access(const char *path, int mask) {
  if (is_control(path)) return 0;
  return faccessat(root_fd, rel(path), mask, AT_EACCESS) < 0 ? -errno : 0;
}

static int pc_readlink(const char *path, char *buf, size_t size) {
  ssize_t len = readlinkat(root_fd, rel(path), buf, size - 1);
  if (len < 0) return -errno;
  buf[len] = '\0';
  return 0;
}

static int pc_mknod(const char *path, mode_t mode, dev_t rdev) {
  if (mknodat(root_fd, rel(path), mode, rdev) < 0) return -errno;
  remember_name(path);
  return 0;
}

static int pc_mkdir(const char *path, mode_t mode) {
  if (mkdirat(root_fd, rel(path), mode) < 0) return -errno;
  remember_name(path);
  return 0;
}

static int pc_symlink(const char *target, const char *path) {
  if (symlinkat(target, root_fd, rel(path)) < 0) return -errno;
  remember_name(path);
  return 0;
}

static int pc_link(const char *from, const char *to) {
  if (linkat(root_fd, rel(from), root_fd, rel(to), 0) < 0) return -errno;
  remember_name(to);
  return 0;
}

static int pc_unlink(const char *path) {
  if (is_control(path)) return -EPERM;
  struct stat st;
  int last = fstatat(root_fd, rel(path), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
             st.st_nlink == 1;
  if (unlinkat(root_fd, rel(path), 0) < 0) return -errno;
  forget_names(same_path, path);
  if (last) {
    /* Its contents can no longer be reached after a cut: nothing to restore. */
    for (struct node *n = nodes; n; n = n->next) {
      if (n->dev == st.st_dev && n->ino == st.st_ino) {
        unlink_node(n);
        free_node(n);
        break;
      }
    }
  }
  return 0;
}

static int pc_rmdir(const char *path) {
  if (unlinkat(root_fd, rel(path), AT_REMOVEDIR) < 0) return -errno;
  forget_names(same_path, path);
  return 0;
}

static int pc_rename(const char *from, const char *to, unsigned int flags) {
  if (is_control(from) || is_control(to)) return -EPERM;
  if (renameat2(root_fd, rel(from), root_fd, rel(to), flags) < 0) return -errno;
  forget_names(same_or_below, from);
  forget_names(same_or_below, to);
  return 0;
}

static int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
  if (fi && fi->fh != CONTROL_FH) return fchmod((int)fi->fh, mode) < 0 ? -errno : 0;
  if (is_control(path)) return 0;
  return fchmodat(root_fd, rel(path), mode, 0) < 0 ? -errno : 0;
}

static int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
  if (fi && fi->fh != CONTROL_FH) return fchown((int)fi->fh, uid, gid) < 0 ? -errno : 0;
  if (is_control(path)) return 0;
  return fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
  if (fi && fi->fh != CONTROL_FH) return futimens((int)fi->fh, tv) < 0 ? -errno : 0;
  if (is_control(path)) return 0;
  return utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int pc_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
  if (is_control(path) || (fi && fi->fh == CONTROL_FH)) return 0;
  if (fi) return change_size((int)fi->fh, size);
  int fd = openat(root_fd, rel(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int res = change_size(fd, size);
  close(fd);
  return res;
}

static void cache_mode(const char *path, struct fuse_file_info *fi) {
  size_t len = strlen(path);
  int shm = len >= 4 && strcmp(path + len - 4, "-shm") == 0;
  fi->direct_io = !shm;
  fi->keep_cache = 0;
}

/* Opens the backing file; O_TRUNC goes through change_size so that a cut can undo it. */
static int open_backing(const char *path, int flags, mode_t mode, struct fuse_file_info *fi) {
  int fd = openat(root_fd, rel(path), (flags & ~O_TRUNC) | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  if ((flags & O_TRUNC) && writable(flags)) {
    int res = change_size(fd, 0);
    if (res < 0) {
      close(fd);
      return res;
    }
  }
  fi->fh = (uint64_t)fd;
  cache_mode(path, fi);
  return 0;
}

static int pc_open(const char *path, struct fuse_file_info *fi) {
  if (is_control(path)) {
    fi->fh = CONTROL_FH;
    fi->direct_io = 1;
    return 0;
  }
  return open_backing(path, fi->flags, 0, fi);
}

static int pc_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
  if (is_control(path)) return pc_open(path, fi);
  int fd = openat(root_fd, rel(path), (fi->flags & ~O_TRUNC) | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd >= 0) {
    remember_name(path);
    fi->fh = (uint64_t)fd;
    cache_mode(path, fi);
    return 0;
  }
  if (errno != EEXIST || (fi->flags & O_EXCL)) return -errno;
  return open_backing(path, fi->flags & ~O_CREAT, 0, fi);
}

static int control_read(char *buf, size_t size, off_t off) {
  unsigned long pending_pages = 0;
  unsigned long long pending_bytes = 0;
  unsigned long files = 0, pending_names = 0;
  for (struct node *n = nodes; n; n = n->next) {
    files++;
    pending_bytes += n->changed;
    for (size_t p = 0; p < n->npages; p++) pending_pages += n->saved[p] != NULL;
  }
  for (struct name *m = names; m; m = m->next) pending_names++;
  char text[512];
  int len = snprintf(text, sizeof text,
                     "{\"pendingFiles\":%lu,\"pendingBytes\":%llu,\"pendingPages\":%lu,"
                     "\"pendingNames\":%lu,\"cuts\":%lu,\"syncs\":%lu,\"lastCut\":{\"files\":%lu,"
                     "\"bytes\":%llu,\"pages\":%lu,\"names\":%lu}}\n",
                     files, pending_bytes, pending_pages, pending_names, counters.drops,
                     counters.syncs, counters.last_files, counters.last_bytes,
                     counters.last_pages, counters.last_names);
  if (off >= len) return 0;
  size_t n = (size_t)(len - off) < size ? (size_t)(len - off) : size;
  memcpy(buf, text + off, n);
  return (int)n;
}

static int control_write(const char *buf, size_t size) {
  if (size >= 4 && strncmp(buf, "drop", 4) == 0)
    drop_all();
  else if (size >= 4 && strncmp(buf, "sync", 4) == 0)
    sync_all();
  else
    return -EINVAL;
  return (int)size;
}

static int pc_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)path;
  if (fi->fh == CONTROL_FH) return control_read(buf, size, off);
  ssize_t res = pread((int)fi->fh, buf, size, off);
  return res < 0 ? -errno : (int)res;
}

static int pc_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi) {
  (void)path;
  if (fi->fh == CONTROL_FH) return control_write(buf, size);
  int fd = (int)fi->fh;
  int err = 0;
  struct node *n = node_of(fd, &err);
  if (!n) return err;
  if (fi->flags & O_APPEND) {
    struct stat st;
    if (fstat(fd, &st) < 0) return -errno;
    off = st.st_size;
  }
  int saved = save_range(n, off, (off_t)size);
  if (saved < 0) return saved;
  ssize_t res = pwrite(fd, buf, size, off);
  if (res < 0) return -errno;
  n->changed += (unsigned long long)res;
  return (int)res;
}

static int pc_statfs(const char *path, struct statvfs *st) {
  (void)path;
  return fstatvfs(root_fd, st) < 0 ? -errno : 0;
}

static int pc_release(const char *path, struct fuse_file_info *fi) {
  (void)path;
  if (fi->fh != CONTROL_FH) close((int)fi->fh);
  return 0;
}

static int pc_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
  (void)path;
  (void)datasync;
  if (fi->fh == CONTROL_FH) return 0;
  struct node *n = find_node((int)fi->fh);
  if (n) {
    unlink_node(n);
    free_node(n);
  }
  return 0;
}

static int pc_fallocate(const char *path, int mode, off_t off, off_t len,
                        struct fuse_file_info *fi) {
  (void)path;
  /* Only allocation (what SQLite may ask for); a hole punched or a range zeroed is refused. */
  if (mode & ~FALLOC_FL_KEEP_SIZE) return -EOPNOTSUPP;
  if (fi->fh == CONTROL_FH) return -EOPNOTSUPP;
  int err = 0;
  struct node *n = node_of((int)fi->fh, &err);
  if (!n) return err;
  if (fallocate((int)fi->fh, mode, off, len) < 0) return -errno;
  n->changed += (unsigned long long)len;
  return 0;
}

/* An open directory keeps its path (with nullpath_ok, fsyncdir is not given one) and its stream.
 * Its handle is its descriptor, as a file's is, so a call made through it (fchmod, futimens) reaches
 * the directory; the rest is found here by that descriptor. */
struct open_dir {
  DIR *dir;
  char *path;
};

static struct open_dir **dirs;
static size_t dirs_len;

static struct open_dir *dir_of(struct fuse_file_info *fi) {
  return fi->fh < dirs_len ? dirs[fi->fh] : NULL;
}

static int pc_opendir(const char *path, struct fuse_file_info *fi) {
  int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  if ((size_t)fd >= dirs_len) {
    size_t len = (size_t)fd * 2 + 16;
    struct open_dir **grown = realloc(dirs, len * sizeof *grown);
    if (!grown) {
      close(fd);
      return -ENOMEM;
    }
    memset(grown + dirs_len, 0, (len - dirs_len) * sizeof *grown);
    dirs = grown;
    dirs_len = len;
  }
  struct open_dir *d = malloc(sizeof *d);
  if (d) d->path = strdup(path);
  if (!d || !d->path) {
    free(d);
    close(fd);
    return -ENOMEM;
  }
  d->dir = fdopendir(fd);
  if (!d->dir) {
    int err = -errno;
    close(fd);
    free(d->path);
    free(d);
    return err;
  }
  dirs[fd] = d;
  fi->fh = (uint64_t)fd;
  return 0;
}

static int pc_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
  (void)path;
  (void)off;
  (void)flags;
  struct open_dir *d = dir_of(fi);
  if (!d) return -EBADF;
  rewinddir(d->dir);
  for (struct dirent *e; (e = readdir(d->dir));) {
    struct stat st = {.st_ino = e->d_ino, .st_mode = (mode_t)DTTOIF(e->d_type)};
    if (fill(buf, e->d_name, &st, 0, 0)) break;
  }
  return 0;
}

static int pc_releasedir(const char *path, struct fuse_file_info *fi) {
  (void)path;
  struct open_dir *d = dir_of(fi);
  if (!d) return 0;
  dirs[fi->fh] = NULL;
  closedir(d->dir);
  free(d->path);
  free(d);
  return 0;
}

static int pc_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
  (void)path;
  (void)datasync;
  struct open_dir *d = dir_of(fi);
  if (d) forget_names(in_directory, d->path);
  return 0;
}

static const struct fuse_operations ops = {
    .init = pc_init,
    .getattr = pc_getattr,
    .access = pc_access,
    .readlink = pc_readlink,
    .mknod = pc_mknod,
    .mkdir = pc_mkdir,
    .symlink = pc_symlink,
    .link = pc_link,
    .unlink = pc_unlink,
    .rmdir = pc_rmdir,
    .rename = pc_rename,
    .chmod = pc_chmod,
    .chown = pc_chown,
    .utimens = pc_utimens,
    .truncate = pc_truncate,
    .open = pc_open,
    .create = pc_create,
    .read = pc_read,
    .write = pc_write,
    .statfs = pc_statfs,
    .release = pc_release,
    .fsync = pc_fsync,
    .fallocate = pc_fallocate,
    .opendir = pc_opendir,
    .readdir = pc_readdir,
    .releasedir = pc_releasedir,
    .fsyncdir = pc_fsyncdir,
};

int main(int argc, char *argv[]) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s BACKING_DIR MOUNTPOINT\n", argv[0]);
    return 2;
  }
  root_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    fprintf(stderr, "powercut-fs: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  umask(0);
  char *args[] = {argv[0], argv[2], "-f", "-s", "-o", "auto_unmount,fsname=powercut,subtype=powercut", NULL};
  return fuse_main(6, args, &ops, NULL);
}
