package org.tornadomla.io;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one way this library and its commands write a file: never half a file, never over anything but a
 * regular file the caller may replace, never over one of the command's own inputs.
 *
 * <p>{@link #write} first {@link #check checks} the target, then writes the content to a new file in the
 * target's directory (created with the process's usual permissions, i.e. 0666 minus the umask, not the 0600
 * of {@code Files.createTempFile}; a file it replaces keeps its permissions), forces it to disk and renames it
 * over the target in one atomic step. If anything fails the target is untouched and the temporary file is
 * removed. A target that is a symbolic link is written through: the file it points to is replaced, the link
 * stays.
 *
 * <p>Refused, with an {@link MlaException} naming the path: a target that exists but is not a regular file (a
 * directory, {@code /dev/null} or another device, a FIFO, a socket), a dangling symbolic link, a read-only
 * file (no write permission bit set, also when running as root), and a target that is the same file as one
 * of {@code inputs} however it is spelled (relative or absolute, through symbolic links, a hard link).
 * Commands pass every file they read (config, each weight shard and the index, the input file).
 */
public final class OutputFiles {
    private OutputFiles() {
    }

    /** Writes the content to a stream; the stream is buffered, flushed and closed by {@link #write}. */
    @FunctionalInterface
    public interface Content {
        void writeTo(OutputStream out) throws IOException;
    }

    /**
     * Refuses, before any work, to replace a file that exists and is not one this kind of output wrote: a file whose
     * first bytes {@code ours} does not accept (an empty file may be replaced). A table or chart written again goes over
     * the last one; a note, a checkpoint or anything else named by mistake is left alone.
     *
     * @param option the option that named it, for the message ({@code --csv})
     * @param kind   what such a file is, for the message ({@code "a CSV of mla bench"})
     */
    public static void checkOwn(String option, Path target, String kind, java.util.function.Predicate<byte[]> ours) {
        if (!Files.isRegularFile(target)) return;
        byte[] head;
        try (var in = Files.newInputStream(target)) {
            head = in.readNBytes(4096);
        } catch (IOException e) {
            throw new MlaException("cannot read " + target + " (" + option + "): " + Messages.reason(e));
        }
        if (head.length > 0 && !ours.test(head)) {
            throw new MlaException(option + " " + target + " exists and is not " + kind + ", so it is not replaced: name a new file, or move it away");
        }
    }

    /**
     * The {@code __metadata__} key the command line's safetensors outputs name their command in ("mla run-layer", "mla
     * rank"), so that a later run replaces only a file of its own ({@link #writtenBy}).
     */
    public static final String WRITTEN_BY = "tornadomla.written_by";

    /**
     * Whether a safetensors file's first bytes {@code head} name {@code command} under {@link #WRITTEN_BY} (the first
     * metadata entry, written compactly), or hold one of {@code olderMarks}: what the command's files held before it
     * named itself (a tensor or metadata name only it writes, e.g. {@code "prefill_output}).
     */
    public static boolean writtenBy(byte[] head, String command, String... olderMarks) {
        String text = new String(head, java.nio.charset.StandardCharsets.ISO_8859_1);
        if (text.contains("\"" + WRITTEN_BY + "\":\"" + command + "\"")) return true;
        for (String m : olderMarks) if (text.contains(m)) return true;
        return false;
    }

    /** Whether {@code head} starts with the line {@code header} (one of a CSV's possible headers). */
    public static boolean startsWithLine(byte[] head, String... headers) {
        String text = new String(head, java.nio.charset.StandardCharsets.UTF_8);
        int end = text.indexOf('\n');
        String first = (end < 0 ? text : text.substring(0, end)).strip();
        for (String h : headers) if (first.equals(h)) return true;
        return false;
    }

    /**
     * Throws unless {@code target} may be written (see the class comment), so that a command can refuse a bad
     * output before its work: for a new file, also its nearest existing folder must be a folder (not a file in
     * the way) where a file can be created, which is tried (a probe file created and removed at once; folders
     * still to be made are not made).
     */
    public static void check(Path target, Collection<Path> inputs) {
        Path real = resolve(target, inputs);
        if (Files.exists(real)) return;
        Path folder = real.getParent();
        while (folder != null && !Files.exists(folder)) folder = folder.getParent();
        if (folder == null) return;
        if (!Files.isDirectory(folder)) throw new MlaException("cannot write " + target + ": a file is in the way: " + folder);
        try {
            Files.delete(createTemp(folder, real.getFileName().toString()));
        } catch (IOException e) {
            throw new MlaException("cannot write " + target + ": no file can be created in " + folder + " (" + Messages.reason(e) + ")");
        }
    }

    public static void write(Path target, Content content) {
        write(target, List.of(), content);
    }

    /** Writes {@code target} atomically with {@code content}, after {@link #check}ing it against {@code inputs}. */
    public static void write(Path target, Collection<Path> inputs, Content content) {
        write(target, inputs, content, true);
    }

    /**
     * Writes {@code target} as {@link #write(Path, Content)} does, but only as a new file: refused, with nothing
     * written, where a file or link of that name exists, and also where one appears while the content is written
     * (another process, another thread): the finished file is published with a hard link, which the file system makes
     * only if the name is free, in one step. Where the file system has no hard links, the name is checked once more
     * and the file renamed there, which leaves a window of a few system calls.
     */
    public static void writeNew(Path target, Content content) {
        write(target, List.of(), content, false);
    }

    private static void write(Path target, Collection<Path> inputs, Content content, boolean replace) {
        Objects.requireNonNull(content, "content");
        Path real = resolve(target, inputs);
        if (!replace) refuseExisting(target, real);
        Path dir = real.getParent();
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            Set<PosixFilePermission> keep = Files.exists(real) ? permissions(real) : null;
            tmp = createTemp(dir, real.getFileName().toString());
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                OutputStream out = new BufferedOutputStream(Channels.newOutputStream(ch), 1 << 20);
                content.writeTo(out);
                out.flush();
                ch.force(true);
            }
            if (keep != null) Files.setPosixFilePermissions(tmp, keep);
            // the target may have changed while we wrote: check again right before the rename
            resolve(target, inputs);
            if (!replace) {
                publishNew(target, real, tmp);
            } else {
                Files.move(tmp, real, StandardCopyOption.ATOMIC_MOVE);
                tmp = null;
            }
        } catch (AtomicMoveNotSupportedException e) {
            throw new MlaException("cannot write " + target + ": this file system cannot replace a file atomically");
        } catch (IOException e) {
            throw new MlaException("cannot write " + target + ": " + Messages.reason(e), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: the target itself was never touched
                }
            }
        }
    }

    private static void refuseExisting(Path target, Path real) {
        if (Files.exists(real, LinkOption.NOFOLLOW_LINKS)) {
            throw new MlaException("cannot write " + target + ": it exists and was left as it is; expected a new path");
        }
    }

    /** Gives the written {@code tmp} the name {@code real} only if no file has it (the caller removes tmp). */
    private static void publishNew(Path target, Path real, Path tmp) throws IOException {
        try {
            Files.createLink(real, tmp);                     // link(2): fails with EEXIST, never replaces
        } catch (FileAlreadyExistsException e) {
            throw appeared(target);
        } catch (UnsupportedOperationException | java.nio.file.FileSystemException e) {
            refuseExisting(target, real);                    // no hard links here: check, then rename (not ATOMIC_MOVE, which replaces)
            try {
                Files.move(tmp, real);
            } catch (FileAlreadyExistsException f) {
                throw appeared(target);
            }
        }
    }

    private static MlaException appeared(Path target) {
        return new MlaException("cannot write " + target + ": a file of that name appeared while this one was written, and was left as it is; "
                + "expected a new path");
    }

    /**
     * A new, empty file ".NAME.RANDOM.tmp" in dir, created exclusively (O_EXCL: never an existing file or
     * link) with the default permissions, which the umask reduces as for any new file.
     */
    private static Path createTemp(Path dir, String name) throws IOException {
        String base = "." + (name.length() > 100 ? name.substring(0, 100) : name) + ".";
        for (int attempt = 0; ; attempt++) {
            Path tmp = dir.resolve(base + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
            try {
                Files.newByteChannel(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                return tmp;
            } catch (FileAlreadyExistsException e) {
                if (attempt > 20) throw e;
            }
        }
    }

    private static Set<PosixFilePermission> permissions(Path p) throws IOException {
        PosixFileAttributeView v = Files.getFileAttributeView(p, PosixFileAttributeView.class);
        return v == null ? null : v.readAttributes().permissions();
    }

    /**
     * Whether writes to {@code a} and {@code b} land in the same file, however each is spelled: absolute, normalised,
     * symbolic links followed as far as they exist (a new file's nearest existing folder). Commands with several
     * outputs refuse two that do: one would silently replace the other.
     */
    public static boolean sameTarget(Path a, Path b) {
        return where(a).equals(where(b));
    }

    private static Path where(Path p) {
        Path abs = p.toAbsolutePath().normalize();
        try {
            if (Files.exists(abs)) return abs.toRealPath();
        } catch (IOException e) {
            // unreadable on the way: compare it as spelled
        }
        Path parent = abs.getParent();
        return parent == null || abs.getFileName() == null ? abs : where(parent).resolve(abs.getFileName());
    }

    /** The path to write (symbolic links followed), after every check of the class comment. */
    private static Path resolve(Path target, Collection<Path> inputs) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(inputs, "inputs");
        Path abs = target.toAbsolutePath().normalize();
        if (abs.getParent() == null) throw new MlaException("cannot write " + target + ": not a file name");
        if (!Files.exists(abs, LinkOption.NOFOLLOW_LINKS)) {
            return abs;
        }
        Path real;
        try {
            real = abs.toRealPath();
        } catch (IOException e) {
            throw new MlaException("cannot write " + target + ": it is a symbolic link to nowhere (" + Messages.reason(e) + ")");
        }
        if (!Files.isRegularFile(real)) {
            throw new MlaException("cannot write " + target + ": it exists and is not a regular file but " + kind(real)
                    + "; give the path of a new or regular file");
        }
        for (Path in : inputs) {
            if (in == null) continue;
            try {
                if (Files.exists(in) && Files.isSameFile(real, in)) {
                    throw new MlaException("cannot write " + target + ": it is the input file " + in
                            + " of this command; choose another output path");
                }
            } catch (IOException e) {
                // an input we cannot stat cannot be compared; it was read (or refused) by the command already
            }
        }
        if (readOnly(real)) {
            throw new MlaException("cannot write " + target + ": the file is read-only; remove it or choose another output path");
        }
        return real;
    }

    /** No write permission for us, or no write bit at all (root may write anything, but a 0444 file says "keep"). */
    private static boolean readOnly(Path p) {
        if (!Files.isWritable(p)) return true;
        try {
            Set<PosixFilePermission> perms = permissions(p);
            return perms != null && !perms.contains(PosixFilePermission.OWNER_WRITE)
                    && !perms.contains(PosixFilePermission.GROUP_WRITE) && !perms.contains(PosixFilePermission.OTHERS_WRITE);
        } catch (IOException e) {
            return false;
        }
    }

    private static String kind(Path p) {
        if (Files.isDirectory(p)) return "a directory";
        try {
            PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class);
            if (a.isOther()) {
                Object mode = Files.getAttribute(p, "unix:mode");
                if (mode instanceof Integer m) {
                    return switch (m & 0170000) {
                        case 0020000 -> "a character device";
                        case 0060000 -> "a block device";
                        case 0010000 -> "a FIFO (named pipe)";
                        case 0140000 -> "a socket";
                        default -> "a special file";
                    };
                }
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            // fall through
        }
        return "a special file";
    }
}
