package io.fdkvc.core.param;

import io.fdkvc.core.InputException;

/** A parameter value that is missing, mistyped or out of range; names the parameter. */
public final class ParameterException extends InputException {
    private final String parameter;

    public ParameterException(String parameter, String message) {
        super(parameter + ": " + message);
        this.parameter = parameter;
    }

    public String parameter() {
        return parameter;
    }
}
