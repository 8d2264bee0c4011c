package org.tornadomla.tornado;

import org.tornadomla.MlaException;
import uk.ac.manchester.tornado.api.TornadoBackend;
import uk.ac.manchester.tornado.api.TornadoRuntime;
import uk.ac.manchester.tornado.api.common.TornadoDevice;
import uk.ac.manchester.tornado.api.runtime.TornadoRuntimeProvider;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** TornadoVM's devices, named "backend:device" as TornadoVM's own {@code -D<graph>.<task>.device} does. */
public final class TornadoDevices {
    private TornadoDevices() {
    }

    private static TornadoRuntime runtime() {
        return TornadoRuntimeProvider.getTornadoRuntime();
    }

    /** One line per device: "B:D  BACKEND  name  memory". Called reflectively by {@code mla devices}. */
    public static List<String> list() {
        List<String> out = new ArrayList<>();
        TornadoDevice dflt = runtime().getDefaultDevice();
        for (int b = 0; b < runtime().getNumBackends(); b++) {
            TornadoBackend backend = runtime().getBackend(b);
            for (int d = 0; d < backend.getNumDevices(); d++) {
                TornadoDevice dev = backend.getDevice(d);
                out.add(String.format(Locale.ROOT, "%d:%d  %-6s  %s  %.1f GB%s", b, d, backend.getBackendType(), dev.getPhysicalDevice().getDeviceName(),
                        dev.getMaxGlobalMemory() / 1e9, sameDevice(dev, dflt) ? "  (default)" : ""));
            }
        }
        return out;
    }

    static TornadoDevice defaultDevice() {
        return runtime().getDefaultDevice();
    }

    /** The device for "B:D", or one error naming what exists. */
    static TornadoDevice resolve(String spec) {
        String[] p = spec.split(":");
        int b, d;
        try {
            if (p.length != 2) throw new NumberFormatException();
            b = Integer.parseInt(p[0].trim());
            d = Integer.parseInt(p[1].trim());
        } catch (NumberFormatException e) {
            throw new MlaException("device must be backend:device, e.g. 0:0, found '" + spec + "'");
        }
        if (b < 0 || b >= runtime().getNumBackends() || d < 0 || d >= runtime().getBackend(b).getNumDevices()) {
            throw new MlaException("unknown TornadoVM device " + spec + " (available: " + String.join("; ", list()) + ")");
        }
        return runtime().getBackend(b).getDevice(d);
    }

    /** "B:D BACKEND name". */
    static String describe(TornadoDevice dev) {
        for (int b = 0; b < runtime().getNumBackends(); b++) {
            TornadoBackend backend = runtime().getBackend(b);
            for (int d = 0; d < backend.getNumDevices(); d++) {
                if (sameDevice(backend.getDevice(d), dev)) {
                    return b + ":" + d + " " + backend.getBackendType() + " " + dev.getPhysicalDevice().getDeviceName();
                }
            }
        }
        return dev.getDeviceName();
    }

    private static boolean sameDevice(TornadoDevice a, TornadoDevice b) {
        return a.getBackendIndex() == b.getBackendIndex() && a.getDeviceName().equals(b.getDeviceName());
    }
}
