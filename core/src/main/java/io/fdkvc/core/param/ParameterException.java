package io.fdkvc.core.param;

/** A parameter value that is missing, mistyped or out of range; names the parameter. */
public final class ParameterException extends IllegalArgumentException {
    private final String parameter;

    public ParameterException(String parameter, String message) {
        super(parameter + ": " + message);
        this.parameter = parameter;
    }

    public String parameter() {
        return parameter;
    }
}
