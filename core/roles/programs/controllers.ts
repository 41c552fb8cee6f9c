/** The controller families a program is written for; a program names one (the vault, an adopted file). */
export const CONTROLLERS = ['fanuc', 'siemens', 'heidenhain', 'haas', 'mazak', 'okuma', 'mitsubishi', 'other'] as const;
export type Controller = (typeof CONTROLLERS)[number];
