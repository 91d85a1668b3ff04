import DefaultTheme from 'vitepress/theme';
import './reference-tables.css';

export default DefaultTheme;
