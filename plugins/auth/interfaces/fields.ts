/** The username and password rules of the auth interfaces. */
import { z } from 'zod';
import { MIN_PASSWORD_LENGTH } from '../../../core/auth/passwords.js';
import { USERNAME_PATTERN } from '../user-store.js';

export const username = z.string().regex(USERNAME_PATTERN, 'username must be 1-64 letters, digits, _ . @ -, starting with a letter or digit');
export const password = z.string().min(MIN_PASSWORD_LENGTH, `password must have at least ${MIN_PASSWORD_LENGTH} characters`).max(256);
