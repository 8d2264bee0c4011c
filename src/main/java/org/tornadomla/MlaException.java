package org.tornadomla;

import org.tornadomla.internal.Messages;

/**
 * The one error type of the library for bad input: wrong shapes, unknown dtypes, corrupt files, invalid
 * configs, a full cache. The message names what was expected and what was found, and is always one line of
 * printable text: control characters (line breaks included) in it are written as {@code \}{@code uXXXX}, and
 * it is cut at {@link #MAX_MESSAGE} characters, so that a name read from a damaged file cannot break or flood
 * the line the command line prints.
 */
public class MlaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Longest message kept; longer ones end in "…". */
    public static final int MAX_MESSAGE = Messages.MAX_MESSAGE;

    /** An error about the caller's input, in one line. */
    public MlaException(String message) {
        super(Messages.oneLine(message));
    }

    /** An error about the caller's input, with its cause (e.g. an I/O error). */
    public MlaException(String message, Throwable cause) {
        super(Messages.oneLine(message), cause);
    }
}
