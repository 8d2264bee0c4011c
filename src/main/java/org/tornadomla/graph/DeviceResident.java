package org.tornadomla.graph;

/**
 * State that may live on a device between executions (the latent cache): its host arrays, and a way to
 * bring the newest copy back to the host. An executor that leaves the newest copy on a device registers a
 * pull with {@link #residentOn}; anyone who reads or writes the host arrays calls {@link #toHost} first.
 */
public interface DeviceResident {
    /** The host arrays of this state, in a fixed order. */
    Object[] arrays();

    /** Marks the newest copy as held by {@code owner}; {@code pull} copies it back to the host arrays. */
    void residentOn(Object owner, Runnable pull);

    /** The executor-defined owner of the newest copy, or null when the host arrays are current. */
    Object residentOwner();

    /** Makes the host arrays current (pulls from the device if needed). */
    void toHost();
}
