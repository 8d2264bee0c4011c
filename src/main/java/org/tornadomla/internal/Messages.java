package org.tornadomla.internal;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * How the library's error messages write shapes, names from files or users, and I/O failures (for {@link
 * org.tornadomla.MlaException}'s messages). Not exported: helpers of the messages, not part of the API.
 */
public final class Messages {
    private Messages() {
    }

    /** Longest message an MlaException keeps; longer ones end in "…". */
    public static final int MAX_MESSAGE = 2000;
    /** Longest name {@link #quote} prints. */
    static final int MAX_NAME = 200;

    /** "[2, 3, 4]" for error messages. */
    public static String shape(long... dims) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < dims.length; i++) {
            if (i > 0) sb.append(", ");
            sb.append(dims[i]);
        }
        return sb.append(']').toString();
    }

    /** A shape as the messages write it: {@code [2, 3, 4]}. */
    public static String shape(int... dims) {
        long[] l = new long[dims.length];
        for (int i = 0; i < dims.length; i++) l[i] = dims[i];
        return shape(l);
    }

    /**
     * A name that came from a file or the user, for a message: in single quotes, control and invisible
     * formatting characters escaped as {@code \}{@code uXXXX}, cut at 200 characters.
     */
    public static String quote(String name) {
        if (name == null) return "null";
        String s = name.length() > MAX_NAME ? name.substring(0, MAX_NAME) + "…" : name;
        return "'" + escape(s) + "'";
    }

    /** {@code s} with every character that is not printable text written as {@code \}{@code uXXXX}. */
    public static String escape(String s) {
        StringBuilder sb = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean bad = Character.isISOControl(c) || c == '\u2028' || c == '\u2029'
                    || Character.getType(c) == Character.FORMAT
                    || (Character.isHighSurrogate(c) && (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))))
                    || (Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1))));
            if (bad && sb == null) sb = new StringBuilder(s.length() + 16).append(s, 0, i);
            if (sb != null) {
                if (bad) sb.append(String.format("\\u%04X", (int) c));
                else sb.append(c);
            }
        }
        return sb == null ? s : sb.toString();
    }

    /** {@code message} as one line of printable text, at most {@link #MAX_MESSAGE} characters. */
    public static String oneLine(String message) {
        if (message == null) return null;
        String s = escape(message);
        return s.length() > MAX_MESSAGE ? s.substring(0, MAX_MESSAGE) + "…" : s;
    }

    /** What went wrong with a file operation, in words ("not found", "permission denied", the OS's reason). */
    public static String reason(IOException e) {
        if (e instanceof NoSuchFileException) return "no such file or directory";
        if (e instanceof AccessDeniedException) return "permission denied";
        if (e instanceof java.nio.file.FileAlreadyExistsException f) return "a file is in the way: " + f.getFile();
        if (e instanceof java.nio.file.NotDirectoryException f) return "not a directory: " + f.getFile();
        if (e instanceof FileSystemException f) return f.getReason() != null ? f.getReason() : e.getClass().getSimpleName() + " " + f.getFile();
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }
}
